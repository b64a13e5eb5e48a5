#include "readers/zip_archive.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "readers/byte_cursor.h"

namespace llamadesk {

namespace {

constexpr uint32_t kEndOfDirectory = 0x06054b50, kZip64End = 0x06064b50, kZip64Locator = 0x07064b50;
constexpr uint32_t kDirectoryEntry = 0x02014b50, kLocalHeader = 0x04034b50;
constexpr uint64_t kMaxEntries = 1 << 20;

// The end-of-central-directory record: in the last 22 + 65535 bytes (its comment may be that long).
uint64_t find_end_record(const uint8_t* data, uint64_t size, const std::string& path) {
    if (size < 22) fail(ErrorCode::BadFormat, path + " is too short for a zip archive");
    const uint64_t lowest = size > 22 + 65535 ? size - 22 - 65535 : 0;
    for (uint64_t at = size - 22 + 1; at-- > lowest;) {
        uint32_t sig;
        std::memcpy(&sig, data + at, 4);
        if (sig == kEndOfDirectory) return at;
    }
    fail(ErrorCode::BadFormat, path + " is not a zip archive (no end of central directory record)");
}

struct Directory {
    uint64_t entries = 0, offset = 0, size = 0;
};

Directory directory_of(const uint8_t* data, uint64_t size, const std::string& path) {
    const uint64_t end = find_end_record(data, size, path);
    ByteCursor in(data + end, size - end, path + " (zip end record)");
    in.skip(4 + 2 + 2 + 2, "signature and disk numbers");
    Directory d;
    d.entries = in.read<uint16_t>("entry count");
    d.size = in.read<uint32_t>("directory size");
    d.offset = in.read<uint32_t>("directory offset");
    const bool zip64 = d.entries == 0xffff || d.size == 0xffffffffu || d.offset == 0xffffffffu;
    if (zip64) {
        if (end < 20) fail(ErrorCode::BadFormat, path + ": zip64 locator missing");
        ByteCursor loc(data + end - 20, 20, path + " (zip64 locator)");
        if (loc.read<uint32_t>("zip64 locator signature") != kZip64Locator)
            fail(ErrorCode::BadFormat, path + ": zip64 sizes without a zip64 locator");
        loc.skip(4, "disk");
        const uint64_t at = loc.read<uint64_t>("zip64 end offset");
        if (at > size || size - at < 56) fail(ErrorCode::BadFormat, path + ": zip64 end record outside the file");
        ByteCursor z(data + at, size - at, path + " (zip64 end record)");
        if (z.read<uint32_t>("zip64 end signature") != kZip64End) fail(ErrorCode::BadFormat, path + ": bad zip64 end record");
        z.skip(8 + 2 + 2 + 4 + 4 + 8, "zip64 record header");
        d.entries = z.read<uint64_t>("zip64 entry count");
        d.size = z.read<uint64_t>("zip64 directory size");
        d.offset = z.read<uint64_t>("zip64 directory offset");
    }
    if (d.entries > kMaxEntries || d.offset > size || d.size > size - d.offset)
        fail(ErrorCode::BadFormat, path + ": the zip directory (" + std::to_string(d.entries) + " entries, " +
                                       std::to_string(d.size) + " bytes at " + std::to_string(d.offset) +
                                       ") does not fit the file of " + std::to_string(size) + " bytes");
    return d;
}

// Sizes and offset from the zip64 extra field, for the fields the directory marked 0xffffffff.
void apply_zip64_extra(std::string_view extra, uint64_t& uncompressed, uint64_t& compressed, uint64_t& local,
                       const std::string& where) {
    ByteCursor in(reinterpret_cast<const uint8_t*>(extra.data()), extra.size(), where + " (extra fields)");
    while (in.remaining() >= 4) {
        const uint16_t id = in.read<uint16_t>("extra field id");
        const uint16_t n = in.read<uint16_t>("extra field size");
        ByteCursor field(in.here(), std::min<uint64_t>(n, in.remaining()), where + " (zip64 field)");
        in.skip(n, "extra field");
        if (id != 0x0001) continue;
        if (uncompressed == 0xffffffffu) uncompressed = field.read<uint64_t>("zip64 size");
        if (compressed == 0xffffffffu) compressed = field.read<uint64_t>("zip64 compressed size");
        if (local == 0xffffffffu) local = field.read<uint64_t>("zip64 local header offset");
    }
}

}  // namespace

std::vector<ZipEntry> read_zip_entries(const uint8_t* data, uint64_t size, const std::string& path) {
    const Directory d = directory_of(data, size, path);
    ByteCursor in(data + d.offset, d.size, path + " (zip directory)");
    std::vector<ZipEntry> entries;
    for (uint64_t i = 0; i < d.entries; ++i) {
        if (in.read<uint32_t>("directory entry signature") != kDirectoryEntry)
            fail(ErrorCode::BadFormat, path + ": zip directory entry " + std::to_string(i) + " is damaged");
        in.skip(2 + 2 + 2, "versions and flags");
        const uint16_t method = in.read<uint16_t>("compression method");
        in.skip(2 + 2 + 4, "time, date and crc");
        uint64_t compressed = in.read<uint32_t>("compressed size");
        uint64_t uncompressed = in.read<uint32_t>("size");
        const uint16_t name_len = in.read<uint16_t>("name length");
        const uint16_t extra_len = in.read<uint16_t>("extra length");
        const uint16_t comment_len = in.read<uint16_t>("comment length");
        in.skip(2 + 2 + 4, "disk and attributes");
        uint64_t local = in.read<uint32_t>("local header offset");
        ZipEntry e;
        e.name = std::string(in.read_bytes(name_len, "entry name"));
        const std::string where = path + ": zip entry " + e.name.substr(0, 128);
        apply_zip64_extra(in.read_bytes(extra_len, "extra fields"), uncompressed, compressed, local, where);
        in.skip(comment_len, "entry comment");
        if (method != 0)
            fail(ErrorCode::Unsupported, where + " is compressed (method " + std::to_string(method) +
                                             "); checkpoints are read only from stored (uncompressed) entries");
        if (compressed != uncompressed)
            fail(ErrorCode::BadFormat, where + " has stored size " + std::to_string(compressed) + " but size " +
                                           std::to_string(uncompressed));
        if (local > size || size - local < 30) fail(ErrorCode::BadFormat, where + " has its header outside the file");
        ByteCursor header(data + local, size - local, where + " (local header)");
        if (header.read<uint32_t>("local header signature") != kLocalHeader)
            fail(ErrorCode::BadFormat, where + ": no local header at offset " + std::to_string(local));
        header.skip(22, "local header fields");
        const uint16_t local_name = header.read<uint16_t>("local name length");
        const uint16_t local_extra = header.read<uint16_t>("local extra length");
        header.skip(uint64_t(local_name) + local_extra, "local name and extra");
        const uint64_t begin = local + header.offset();
        if (begin > size || uncompressed > size - begin)
            fail(ErrorCode::BadFormat, where + " extends past the end of the file (" + std::to_string(uncompressed) +
                                           " bytes at " + std::to_string(begin) + ", file size " + std::to_string(size) + ")");
        e.data = data + begin;
        e.size = uncompressed;
        entries.push_back(std::move(e));
    }
    std::vector<const ZipEntry*> by_offset;
    for (const ZipEntry& e : entries) by_offset.push_back(&e);
    std::sort(by_offset.begin(), by_offset.end(), [](auto* a, auto* b) { return a->data < b->data; });
    for (size_t i = 1; i < by_offset.size(); ++i)
        if (by_offset[i]->data < by_offset[i - 1]->data + by_offset[i - 1]->size)
            fail(ErrorCode::BadFormat, path + ": zip entries " + by_offset[i - 1]->name.substr(0, 128) + " and " +
                                           by_offset[i]->name.substr(0, 128) + " overlap");
    return entries;
}

}  // namespace llamadesk
