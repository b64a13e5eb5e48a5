// A read-only memory mapping of a whole file. Weights are used in place from it, never copied.
#pragma once

#include <cstdint>
#include <string>

namespace llamadesk {

class MappedFile {
public:
    // Throws EngineError(FileNotFound) when the file cannot be opened or mapped.
    explicit MappedFile(const std::string& path);
    ~MappedFile();
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    const uint8_t* data() const { return data_; }
    uint64_t size() const { return size_; }
    const std::string& path() const { return path_; }
    // Drops the pages of [begin, begin + n) from this process's memory: they were read once (copied
    // elsewhere) and are not needed again; a later read would fetch them from the file again.
    void release(const void* begin, uint64_t n) const;

private:
    std::string path_;
    const uint8_t* data_ = nullptr;  // null for an empty file
    uint64_t size_ = 0;
};

}  // namespace llamadesk
