#include "core/host_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <fstream>
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

MappedMemory::MappedMemory(size_t bytes) {
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return;
    ::madvise(p, bytes, MADV_HUGEPAGE);  // advice only: where refused, 4 KiB pages serve as well
    data_ = static_cast<std::byte*>(p);
    bytes_ = bytes;
}

MappedMemory::~MappedMemory() {
    if (data_) ::munmap(data_, bytes_);
}

MappedMemory::MappedMemory(MappedMemory&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

MappedMemory& MappedMemory::operator=(MappedMemory&& other) noexcept {
    if (this != &other) {
        if (data_) ::munmap(data_, bytes_);
        data_ = std::exchange(other.data_, nullptr);
        bytes_ = std::exchange(other.bytes_, 0);
    }
    return *this;
}

}  // namespace llamadesk
