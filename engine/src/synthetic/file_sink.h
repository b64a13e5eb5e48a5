// A file opened for writing whose every write is checked, for the checkpoint writers.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace llamadesk {

class FileSink {
public:
    explicit FileSink(const std::string& path);  // throws EngineError(InvalidArgument)
    ~FileSink();
    FileSink(const FileSink&) = delete;
    FileSink& operator=(const FileSink&) = delete;

    void write(const void* data, size_t n_bytes);
    template <typename T>
    void put(T value) { write(&value, sizeof(T)); }
    void pad_to(uint64_t alignment);   // zero bytes up to the next multiple of alignment
    uint64_t offset() const { return offset_; }
    void close();                       // flushes; throws when the data did not reach the disk

private:
    std::string path_;
    std::FILE* file_ = nullptr;
    uint64_t offset_ = 0;
};

}  // namespace llamadesk
