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
    if (in_memory_) return;
    const uint64_t page = uint64_t(sysconf(_SC_PAGESIZE));
    const uint64_t from = (uint64_t(static_cast<const uint8_t*>(begin) - data_) + page - 1) / page * page;
    const uint64_t to = std::min(size_, uint64_t(static_cast<const uint8_t*>(begin) - data_) + n) / page * page;
    if (data_ && to > from) ::madvise(const_cast<uint8_t*>(data_) + from, to - from, MADV_DONTNEED);
}

void MappedFile::move_to_memory() const {
    // anonymous pages cannot be dropped under memory pressure as mapped ones can: keep 1 GiB spare
    if (!data_ || in_memory_ || available_memory_bytes() < int64_t(size_) + (int64_t(1) << 30)) return;
    void* copy = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (copy == MAP_FAILED) return;
    constexpr uint64_t kChunk = uint64_t(64) << 20;
    for (uint64_t at = 0; at < size_; at += kChunk) {
        const uint64_t n = std::min(kChunk, size_ - at);
        std::memcpy(static_cast<uint8_t*>(copy) + at, data_ + at, n);
        release(data_ + at, n);
    }
    // the copy replaces the mapping at its addresses (MREMAP_FIXED unmaps what was there)
    if (::mprotect(copy, size_, PROT_READ) != 0 ||
        ::mremap(copy, size_, size_, MREMAP_MAYMOVE | MREMAP_FIXED, const_cast<uint8_t*>(data_)) == MAP_FAILED) {
        ::munmap(copy, size_);
        return;
    }
    in_memory_ = true;
}

MappedFile::~MappedFile() {
    if (data_) ::munmap(const_cast<uint8_t*>(data_), size_);
}

}  // namespace llamadesk
