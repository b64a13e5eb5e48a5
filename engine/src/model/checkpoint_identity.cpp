#include "model/checkpoint_identity.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <vector>

#include "core/checksum.h"
#include "core/error.h"

namespace llamadesk {

namespace {

constexpr int64_t kSampled = 1 << 20;  // bytes read from each end of a file

uint64_t checksum_of_range(std::ifstream& in, int64_t offset, int64_t n) {
    std::vector<char> bytes(static_cast<size_t>(n));
    in.seekg(offset);
    in.read(bytes.data(), n);
    return checksum64(bytes.data(), size_t(in.gcount()));
}

std::string file_identity(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) fail(ErrorCode::FileNotFound, "cannot read " + file.string());
    const int64_t size = int64_t(std::filesystem::file_size(file));
    const int64_t head = std::min(size, kSampled);
    const uint64_t first = checksum_of_range(in, 0, head);
    const uint64_t last = checksum_of_range(in, size - head, head);
    return std::to_string(size) + ":" + std::to_string(first) + ":" + std::to_string(last);
}

}  // namespace

std::string checkpoint_identity(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::is_directory(path, ec)) return file_identity(path);
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(path, ec))
        if (entry.is_regular_file()) files.push_back(entry.path());
    if (ec) fail(ErrorCode::FileNotFound, "cannot list " + path + ": " + ec.message());
    std::sort(files.begin(), files.end());
    std::string identity;
    for (const auto& f : files) identity += f.filename().string() + "=" + file_identity(f) + ";";
    return identity;
}

}  // namespace llamadesk
