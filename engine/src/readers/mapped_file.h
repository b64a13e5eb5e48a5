// A read-only memory mapping of a whole file. Weights are used in place from it (or, for the CPU,
// from the same addresses once move_to_memory has put them in anonymous memory).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

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
    // Nothing where begin is not in this file, or where the range overlaps a part moved to memory
    // (a dropped page would read as zeros there).
    void release(const void* begin, uint64_t n) const;

    // Puts the whole pages of bytes [from, to) in anonymous memory at the same addresses (every
    // pointer into them stays valid), replacing the mapping there. CPU decode streams weights about
    // a quarter faster from such pages than from the page cache's (8B Q4_K_M on 2 Xeon cores: 3.0
    // tok/s mapped, 3.8-3.9 moved). Resident memory does not grow past those bytes: each chunk of
    // the mapping is dropped once copied. Where that memory is not available with 1 GiB to spare
    // (anonymous pages cannot be dropped under pressure as mapped ones can) the mapping stays,
    // slower and as correct.
    void move_to_memory(uint64_t from, uint64_t to) const;

private:
    std::string path_;
    const uint8_t* data_ = nullptr;  // null for an empty file
    uint64_t size_ = 0;
    mutable std::vector<std::pair<uint64_t, uint64_t>> moved_;  // byte ranges now in anonymous memory
};

}  // namespace llamadesk
