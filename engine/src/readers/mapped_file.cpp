#include "readers/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "core/host_memory.h"

namespace llamadesk {

MappedFile::MappedFile(const std::string& path) : path_(path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        fail(ErrorCode::FileNotFound, "cannot open " + path + ": " + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        fail(ErrorCode::FileNotFound, path + " is not a regular file");
    }
    size_ = uint64_t(st.st_size);
    if (size_ > 0) {
        void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            const int err = errno;
            ::close(fd);
            fail(ErrorCode::FileNotFound, "cannot memory-map " + path + ": " + std::strerror(err));
        }
        data_ = static_cast<const uint8_t*>(p);
    }
    ::close(fd);  // the mapping stays valid without the descriptor
}

void MappedFile::release(const void* begin, uint64_t n) const {
    const auto* at = static_cast<const uint8_t*>(begin);
    if (!data_ || at < data_ || at >= data_ + size_) return;  // not in this file
    const uint64_t page = uint64_t(sysconf(_SC_PAGESIZE));
    const uint64_t from = (uint64_t(static_cast<const uint8_t*>(begin) - data_) + page - 1) / page * page;
    const uint64_t to = std::min(size_, uint64_t(static_cast<const uint8_t*>(begin) - data_) + n) / page * page;
    for (const auto& [moved_from, moved_to] : moved_)
        if (from < moved_to && moved_from < to) return;
    if (to > from) ::madvise(const_cast<uint8_t*>(data_) + from, to - from, MADV_DONTNEED);
}

void MappedFile::move_to_memory(uint64_t from, uint64_t to) const {
    const uint64_t page = uint64_t(sysconf(_SC_PAGESIZE));
    from = (from + page - 1) / page * page;
    to = std::min(to, size_) / page * page;
    // anonymous pages cannot be dropped under memory pressure as mapped ones can: keep 1 GiB spare
    if (!data_ || to <= from || available_memory_bytes() < int64_t(to - from) + (int64_t(1) << 30)) return;
    const uint64_t n = to - from;
    uint8_t* const target = const_cast<uint8_t*>(data_) + from;
    // The copy lies as the target does within a 2 MiB page, so that the 2 MiB pages it is asked
    // for (core/host_memory.h says why decode wants them) move whole to the file's addresses.
    constexpr uint64_t kHugePage = uint64_t(2) << 20;
    void* const reserved = ::mmap(nullptr, n + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (reserved == MAP_FAILED) return;
    const uint64_t lead = (reinterpret_cast<uintptr_t>(target) - reinterpret_cast<uintptr_t>(reserved)) & (kHugePage - 1);
    uint8_t* const copy = static_cast<uint8_t*>(reserved) + lead;
    if (lead) ::munmap(reserved, lead);
    ::munmap(copy + n, kHugePage - lead);
    ::madvise(copy, n, MADV_HUGEPAGE);  // advice only
    constexpr uint64_t kChunk = uint64_t(64) << 20;
    for (uint64_t at = 0; at < n; at += kChunk) {
        const uint64_t chunk = std::min(kChunk, n - at);
        std::memcpy(copy + at, target + at, chunk);
        ::madvise(target + at, chunk, MADV_DONTNEED);  // copied: the mapped pages go
    }
    // the copy replaces the mapping at its addresses (MREMAP_FIXED unmaps what was there)
    if (::mprotect(copy, n, PROT_READ) != 0 || ::mremap(copy, n, n, MREMAP_MAYMOVE | MREMAP_FIXED, target) == MAP_FAILED) {
        ::munmap(copy, n);
        return;
    }
    moved_.emplace_back(from, to);
}

MappedFile::~MappedFile() {
    if (data_) ::munmap(const_cast<uint8_t*>(data_), size_);
}

}  // namespace llamadesk
