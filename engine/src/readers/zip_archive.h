// The entries of a zip archive that stores them uncompressed, as torch.save writes .pth files:
// each entry is a byte range of the memory-mapped file, never inflated or copied. The central
// directory (zip64 included) is checked against the file: every range inside it, no two entries
// overlapping, sizes that agree.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace llamadesk {

struct ZipEntry {
    std::string name;
    const uint8_t* data = nullptr;
    uint64_t size = 0;
};

// data/size: the whole archive; path names it in messages. Compressed entries are refused.
std::vector<ZipEntry> read_zip_entries(const uint8_t* data, uint64_t size, const std::string& path);

}  // namespace llamadesk
