#include "readers/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>

#include "core/error.h"

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
    const uint64_t page = uint64_t(sysconf(_SC_PAGESIZE));
    const uint64_t from = (uint64_t(static_cast<const uint8_t*>(begin) - data_) + page - 1) / page * page;
    const uint64_t to = std::min(size_, uint64_t(static_cast<const uint8_t*>(begin) - data_) + n) / page * page;
    if (data_ && to > from) ::madvise(const_cast<uint8_t*>(data_) + from, to - from, MADV_DONTNEED);
}

MappedFile::~MappedFile() {
    if (data_) ::munmap(const_cast<uint8_t*>(data_), size_);
}

}  // namespace llamadesk
