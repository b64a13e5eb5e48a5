#include "cache/snapshot_store.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

#include "core/checksum.h"

namespace llamadesk {

namespace fs = std::filesystem;

namespace {

constexpr char kMagic[8] = {'L', 'D', 'K', 'V', 'B', 'L', 'K', '1'};
constexpr char kHistoryMagic[8] = {'L', 'D', 'K', 'V', 'H', 'I', 'S', '1'};
constexpr const char* kExtension = ".kvblock";
constexpr const char* kHistoryExtension = ".kvhistory";

bool counted(const fs::path& p) { return p.extension() == kExtension || p.extension() == kHistoryExtension; }

template <class T>
std::span<const char> bytes_of(const T& v) {
    return {reinterpret_cast<const char*>(&v), sizeof v};
}
template <class T>
std::span<const char> bytes_of(std::span<const T> v) {
    return {reinterpret_cast<const char*>(v.data()), v.size_bytes()};
}
constexpr uint32_t kMaxIdentityBytes = 1 << 16;

// The fixed part of a block file. It is followed by the identity, the prefix tokens (int32), a
// checksum of everything before it, and the block's bytes.
struct Header {
    char magic[8];
    uint32_t identity_bytes;
    uint32_t n_prefix;
    uint64_t payload_bytes;
    uint64_t payload_checksum;
};

std::string hex(uint64_t v) {
    char s[17];
    std::snprintf(s, sizeof s, "%016llx", static_cast<unsigned long long>(v));
    return s;
}

// The header bytes that the header checksum covers.
std::vector<char> header_bytes(const Header& h, const std::string& identity, std::span<const int32_t> prefix) {
    std::vector<char> bytes(sizeof h + identity.size() + prefix.size_bytes());
    std::memcpy(bytes.data(), &h, sizeof h);
    std::memcpy(bytes.data() + sizeof h, identity.data(), identity.size());
    std::memcpy(bytes.data() + sizeof h + identity.size(), prefix.data(), prefix.size_bytes());
    return bytes;
}

}  // namespace

SnapshotStore::SnapshotStore(fs::path root, std::string identity, int64_t block_bytes, int64_t budget_bytes, Log log)
    : root_(std::move(root)), identity_(std::move(identity)), block_bytes_(block_bytes), budget_bytes_(budget_bytes),
      log_(std::move(log)) {
    folder_ = root_ / hex(checksum64(identity_.data(), identity_.size()));
}

fs::path SnapshotStore::path_of(uint64_t key) const { return folder_ / (hex(key) + kExtension); }

bool SnapshotStore::contains(uint64_t key) const {
    std::error_code ec;
    return fs::exists(path_of(key), ec);
}

bool SnapshotStore::touch(uint64_t key) const {
    std::error_code ec;
    fs::last_write_time(path_of(key), fs::file_time_type::clock::now(), ec);
    return !ec;
}

bool SnapshotStore::write(uint64_t key, std::span<const int32_t> prefix, std::span<const std::byte> data) const {
    Header h{};
    std::memcpy(h.magic, kMagic, sizeof kMagic);
    h.identity_bytes = uint32_t(identity_.size());
    h.n_prefix = uint32_t(prefix.size());
    h.payload_bytes = data.size();
    h.payload_checksum = checksum64(data.data(), data.size());
    const std::vector<char> head = header_bytes(h, identity_, prefix);
    const uint64_t head_checksum = checksum64(head.data(), head.size());

    const std::span<const char> parts[] = {head, bytes_of(head_checksum),
                                           {reinterpret_cast<const char*>(data.data()), data.size()}};
    return write_file(path_of(key), parts);
}

SnapshotStore::DiskRoom SnapshotStore::disk_room() const {
    constexpr int64_t kMaxReserve = int64_t(256) << 20;
    std::error_code ec;
    fs::path at = root_;
    while (at.has_parent_path() && !fs::exists(at, ec)) at = at.parent_path();
    const fs::space_info s = fs::space(at, ec);
    if (ec) return {};
    return {int64_t(s.available), std::min(kMaxReserve, int64_t(s.capacity / 4))};
}

bool SnapshotStore::write_file(const fs::path& path, std::span<const std::span<const char>> parts) const {
    std::error_code ec;
    fs::create_directories(folder_, ec);
    int64_t bytes = 0;
    for (std::span<const char> part : parts) bytes += int64_t(part.size());
    auto fits = [&](const DiskRoom& room) { return room.available < 0 || room.available - bytes >= room.reserve; };
    if (!fits(disk_room())) {
        make_room(bytes);  // older snapshots make way first
        if (const DiskRoom room = disk_room(); !fits(room)) {
            log("KV snapshot: not saved: " + std::to_string(room.available >> 20) + " MiB free on the disk, and " +
                std::to_string(room.reserve >> 20) + " MiB stay free for conversations");
            return false;
        }
    }
    // Written beside and renamed into place, so a crash never leaves a half-written file under its
    // real name.
    const fs::path partial = fs::path(path).concat(".partial");
    {
        std::ofstream out(partial, std::ios::binary | std::ios::trunc);
        for (std::span<const char> part : parts) out.write(part.data(), std::streamsize(part.size()));
        out.close();
        if (!out) {
            fs::remove(partial, ec);
            log("KV snapshot: could not write " + path.string() + " (disk full or not writable?)");
            return false;
        }
    }
    fs::rename(partial, path, ec);
    if (ec) {
        fs::remove(partial, ec);
        log("KV snapshot: could not write " + path.string() + ": " + ec.message());
        return false;
    }
    return true;
}

bool SnapshotStore::read(uint64_t key, std::span<const int32_t> prefix, std::span<std::byte> data,
                         std::string* why) const {
    const fs::path path = path_of(key);
    auto reject = [&](const std::string& reason) {
        *why = path.filename().string() + ": " + reason;
        std::error_code ec;
        fs::remove(path, ec);
        return false;
    };
    std::error_code ec;
    const uint64_t file_bytes = fs::file_size(path, ec);
    if (ec) {
        *why = path.filename().string() + ": not on disk";
        return false;
    }
    std::ifstream in(path, std::ios::binary);
    Header h{};
    if (!in.read(reinterpret_cast<char*>(&h), sizeof h)) return reject("truncated before the end of its header");
    if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0) return reject("not a LlamaDesk KV block");
    if (h.identity_bytes > kMaxIdentityBytes) return reject("its header is corrupt");
    if (h.n_prefix != prefix.size())
        return reject("it holds a prefix of " + std::to_string(h.n_prefix) + " tokens, not " +
                      std::to_string(prefix.size()));
    if (h.payload_bytes != uint64_t(data.size()))
        return reject("it holds " + std::to_string(h.payload_bytes) + " bytes, a block of this cache has " +
                      std::to_string(data.size()));
    const uint64_t expected = sizeof h + h.identity_bytes + uint64_t(h.n_prefix) * 4 + 8 + h.payload_bytes;
    if (file_bytes != expected)
        return reject((file_bytes < expected ? "truncated: " : "too long: ") + std::to_string(file_bytes) + " of " +
                      std::to_string(expected) + " bytes");

    std::string identity(h.identity_bytes, '\0');
    std::vector<int32_t> tokens(h.n_prefix);
    uint64_t head_checksum = 0;
    in.read(identity.data(), std::streamsize(identity.size()));
    in.read(reinterpret_cast<char*>(tokens.data()), std::streamsize(tokens.size() * 4));
    in.read(reinterpret_cast<char*>(&head_checksum), sizeof head_checksum);
    in.read(reinterpret_cast<char*>(data.data()), std::streamsize(data.size()));
    if (!in) return reject("could not be read");
    const std::vector<char> head = header_bytes(h, identity, tokens);
    if (checksum64(head.data(), head.size()) != head_checksum) return reject("its header is corrupt (checksum)");
    if (identity != identity_) return reject("it was written for another model, cache type or backend");
    if (!std::equal(tokens.begin(), tokens.end(), prefix.begin(), prefix.end()))
        return reject("its tokens differ from this conversation's");
    if (checksum64(data.data(), data.size()) != h.payload_checksum) return reject("its keys and values are corrupt (checksum)");
    return true;
}

namespace {

uint64_t history_key(const std::string& text_key) { return checksum64(text_key.data(), text_key.size()); }

}  // namespace

bool SnapshotStore::write_history(const std::string& text_key, const SavedHistory& history) const {
    const uint32_t counts[3] = {uint32_t(text_key.size()), uint32_t(history.tokens.size()),
                                uint32_t(history.turn_begins.size())};
    std::string body(kHistoryMagic, sizeof kHistoryMagic);
    const std::span<const char> fields[] = {bytes_of(counts), {text_key.data(), text_key.size()},
                                            bytes_of(std::span<const int32_t>(history.tokens)),
                                            bytes_of(std::span<const int32_t>(history.turn_begins)),
                                            bytes_of(std::span<const int32_t>(history.turn_ends))};
    for (std::span<const char> f : fields) body.append(f.data(), f.size());
    const uint64_t checksum = checksum64(body.data(), body.size());
    const std::span<const char> parts[] = {{body.data(), body.size()}, bytes_of(checksum)};
    return write_file(folder_ / (hex(history_key(text_key)) + kHistoryExtension), parts);
}

bool SnapshotStore::read_history(const std::string& text_key, SavedHistory* out, std::string* why) const {
    const fs::path path = folder_ / (hex(history_key(text_key)) + kHistoryExtension);
    std::ifstream in(path, std::ios::binary);
    if (!in) return false;  // none saved: nothing to say
    const std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    uint32_t counts[3] = {};
    const size_t fixed = sizeof kHistoryMagic + sizeof counts;
    if (file.size() < fixed + 8 || std::memcmp(file.data(), kHistoryMagic, sizeof kHistoryMagic) != 0) {
        *why = path.filename().string() + ": not a LlamaDesk history";
        return false;
    }
    std::memcpy(counts, file.data() + sizeof kHistoryMagic, sizeof counts);
    const uint64_t body = fixed + uint64_t(counts[0]) + 4 * (uint64_t(counts[1]) + 2 * uint64_t(counts[2]));
    uint64_t checksum = 0;
    if (file.size() != body + 8) {
        *why = path.filename().string() + ": truncated or too long";
        return false;
    }
    std::memcpy(&checksum, file.data() + body, 8);
    if (checksum64(file.data(), body) != checksum) {
        *why = path.filename().string() + ": corrupt (checksum)";
        return false;
    }
    if (file.compare(fixed, counts[0], text_key) != 0) {
        *why = path.filename().string() + ": saved for another text";
        return false;
    }
    const char* p = file.data() + fixed + counts[0];
    auto take = [&](std::vector<int32_t>& v, uint32_t n) {
        v.resize(n);
        std::memcpy(v.data(), p, 4 * size_t(n));
        p += 4 * size_t(n);
    };
    take(out->tokens, counts[1]);
    take(out->turn_begins, counts[2]);
    take(out->turn_ends, counts[2]);
    return true;
}

void SnapshotStore::make_room(int64_t incoming) const {
    struct File {
        fs::path path;
        fs::file_time_type used;
        int64_t bytes;
    };
    std::vector<File> files;
    int64_t total = 0;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(root_, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
        if (!it->is_regular_file(ec) || !counted(it->path())) continue;
        const int64_t bytes = int64_t(it->file_size(ec));
        files.push_back({it->path(), it->last_write_time(ec), bytes});
        total += bytes;
    }
    int64_t limit = budget_bytes_;
    if (const DiskRoom room = disk_room(); room.available >= 0)
        limit = std::max<int64_t>(0, std::min(limit, total + room.available - room.reserve - incoming));
    if (total <= limit) return;
    std::sort(files.begin(), files.end(), [](const File& a, const File& b) { return a.used < b.used; });
    int removed = 0;
    for (const File& f : files) {
        if (total <= limit) break;
        if (fs::remove(f.path, ec)) {
            total -= f.bytes;
            ++removed;
        }
    }
    log("KV snapshot: removed the " + std::to_string(removed) + " least recently used blocks to stay within " +
        std::to_string(limit >> 20) + " MiB" + (limit < budget_bytes_ ? " (what the disk has free, less its reserve)" : ""));
}

int64_t SnapshotStore::bytes_on_disk(const fs::path& root) {
    int64_t total = 0;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec))
        if (it->is_regular_file(ec) && counted(it->path())) total += int64_t(it->file_size(ec));
    return total;
}

}  // namespace llamadesk
