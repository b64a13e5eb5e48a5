#include "synthetic/file_sink.h"

#include <cerrno>
#include <cstring>

#include "core/error.h"

namespace llamadesk {

FileSink::FileSink(const std::string& path) : path_(path), file_(std::fopen(path.c_str(), "wb")) {
    if (!file_)
        fail(ErrorCode::InvalidArgument, "cannot create " + path + ": " + std::strerror(errno));
}

FileSink::~FileSink() {
    if (file_) std::fclose(file_);
}

void FileSink::write(const void* data, size_t n_bytes) {
    if (n_bytes != 0 && std::fwrite(data, 1, n_bytes, file_) != n_bytes)
        fail(ErrorCode::Internal, "cannot write " + path_ + ": " + std::strerror(errno));
    offset_ += n_bytes;
}

void FileSink::pad_to(uint64_t alignment) {
    static const char zeros[64] = {};
    while (offset_ % alignment != 0)
        write(zeros, size_t(std::min<uint64_t>(sizeof(zeros), alignment - offset_ % alignment)));
}

void FileSink::close() {
    std::FILE* f = file_;
    file_ = nullptr;
    if (std::fclose(f) != 0)
        fail(ErrorCode::Internal, "cannot write " + path_ + ": " + std::strerror(errno));
}

}  // namespace llamadesk
