#include "core/host_memory.h"
#include "core/sanitizer.h"

#include <sys/mman.h>
#include <unistd.h>

#include <fstream>
#include <new>
#include <string>
#include <utility>

namespace llamadesk {

int64_t physical_memory_bytes() { return int64_t(sysconf(_SC_PHYS_PAGES)) * int64_t(sysconf(_SC_PAGESIZE)); }

int64_t available_memory_bytes() {
    std::ifstream meminfo("/proc/meminfo");
    std::string key;
    int64_t kib = 0;
    std::string unit;
    while (meminfo >> key >> kib >> unit)
        if (key == "MemAvailable:") return kib * 1024;
    return int64_t(sysconf(_SC_AVPHYS_PAGES)) * int64_t(sysconf(_SC_PAGESIZE));
}

// Under AddressSanitizer the memory comes from its allocator instead, whose red zones catch an
// access past the end; a mapping has none, and the pages' size does not matter there.
constexpr bool kFromAllocator = kAddressSanitizer;

MappedMemory::MappedMemory(size_t bytes) {
    if (kFromAllocator) {
        data_ = new (std::nothrow) std::byte[bytes];
        bytes_ = data_ ? bytes : 0;
        return;
    }
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return;
    ::madvise(p, bytes, MADV_HUGEPAGE);  // advice only: where refused, 4 KiB pages serve as well
    data_ = static_cast<std::byte*>(p);
    bytes_ = bytes;
}

void MappedMemory::release() {
    if (!data_) return;
    if (kFromAllocator) delete[] data_;
    else ::munmap(data_, bytes_);
}

MappedMemory::~MappedMemory() { release(); }

MappedMemory::MappedMemory(MappedMemory&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

MappedMemory& MappedMemory::operator=(MappedMemory&& other) noexcept {
    if (this != &other) {
        release();
        data_ = std::exchange(other.data_, nullptr);
        bytes_ = std::exchange(other.bytes_, 0);
    }
    return *this;
}

}  // namespace llamadesk
