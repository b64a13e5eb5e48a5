// The machine's memory, as the CPU backend's KV cache and the default context are sized by it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace llamadesk {

int64_t physical_memory_bytes();
// Memory a new allocation can take without swapping: Linux's MemAvailable (free memory plus the
// page cache that can be dropped), or the free pages where /proc/meminfo cannot be read.
int64_t available_memory_bytes();

// Memory mapped from the system, for what the CPU backend streams through (the KV pool,
// weights copied at load): its pages become resident as they are first written, so a pool costs
// what is used of it, and are asked for as 2 MiB pages (MADV_HUGEPAGE, which Linux's default
// "madvise" setting honours). With 4 KiB pages, attention's run of a few KiB in each of thousands of
// blocks, and decode's stream of gigabytes of weights, take a TLB miss every page. Under
// AddressSanitizer it is the sanitizer's heap instead (not zeroed), whose red zones guard the end.
class MappedMemory {
public:
    MappedMemory() = default;
    explicit MappedMemory(size_t bytes);  // empty (data() null) when the system refuses the mapping
    ~MappedMemory();
    MappedMemory(MappedMemory&& other) noexcept;
    MappedMemory& operator=(MappedMemory&& other) noexcept;
    MappedMemory(const MappedMemory&) = delete;
    MappedMemory& operator=(const MappedMemory&) = delete;

    std::byte* data() const { return data_; }

private:
    void release();

    std::byte* data_ = nullptr;
    size_t bytes_ = 0;
};

}  // namespace llamadesk
