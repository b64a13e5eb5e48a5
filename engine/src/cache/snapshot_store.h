// Full KV cache blocks kept on disk between runs, so that a conversation whose history comes back
// after a restart (or after its blocks were evicted) reads its keys and values back instead of
// prefilling them again. llama.cpp's server saves a slot on request; this saves every block once.
//
// One file per block, named by the chain key (KvPool::chain_keys) of the tokens through the block's end (the key
// KvPool registers blocks under), so conversations that begin alike share files and a save writes
// only the blocks not on disk yet. Files sit in a folder per identity (everything their bytes
// depend on besides the tokens: the checkpoint, the cache type, the backend, the layout). A file
// holds that identity, every token of its prefix, and checksums of its header and of its bytes; it
// is used only when all of them match, so a missing, mismatched, truncated or corrupt file means
// prefilling, never a wrong cache. Under a byte budget, the least recently used files (by
// modification time, which a save refreshes) go first, whatever model wrote them. Snapshots are a
// cache and never crowd out conversations: the budget is at most what the disk has free less a
// reserve (a quarter of the disk, at most 256 MiB), and no file is written into that reserve.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace llamadesk {

// The exact tokens a conversation's text stood for when it was saved: the text comes back after a
// restart, and its blocks were computed from these tokens, which tokenizing the text again need not
// give (a sampled answer is not always the tokenizer's own split of its text).
struct SavedHistory {
    std::vector<int32_t> tokens;
    std::vector<int32_t> turn_begins, turn_ends;  // per turn, indices into tokens
};

class SnapshotStore {
public:
    using Log = std::function<void(const std::string&)>;

    SnapshotStore(std::filesystem::path root, std::string identity, int64_t block_bytes, int64_t budget_bytes,
                  Log log);

    int64_t block_bytes() const { return block_bytes_; }
    const std::filesystem::path& folder() const { return folder_; }

    // Whether a file is saved under key (not yet verified).
    bool contains(uint64_t key) const;
    // Marks the file under key as just used, for the budget. False when there is none.
    bool touch(uint64_t key) const;
    // Saves a block's bytes under key. False, with the reason logged, when the disk refuses.
    bool write(uint64_t key, std::span<const int32_t> prefix, std::span<const std::byte> data) const;
    // Reads the block saved under key into data when the file is whole and its identity, prefix
    // tokens and checksums match; otherwise false with the reason in *why, and a bad file is
    // deleted so the next save can write it again.
    bool read(uint64_t key, std::span<const int32_t> prefix, std::span<std::byte> data, std::string* why) const;
    // The history saved for a conversation's text (text_key: its format, system prompt and turns,
    // spelled out). Small files beside the blocks, one per text, under the same budget.
    bool write_history(const std::string& text_key, const SavedHistory& history) const;
    // False unless a whole file for exactly this text is there; *why then says what was wrong with
    // the file, and stays empty when there is none.
    bool read_history(const std::string& text_key, SavedHistory* out, std::string* why) const;

    // Deletes the least recently used files under the root (every identity's) until the rest fit
    // the budget and the disk keeps its reserve free.
    void enforce_budget() const { make_room(0); }
    void log(const std::string& message) const {
        if (log_) log_(message);
    }

    // Bytes of every file under root that the budget counts.
    static int64_t bytes_on_disk(const std::filesystem::path& root);

private:
    struct DiskRoom {
        int64_t available = -1, reserve = 0;  // available -1: unknown (the budget alone applies)
    };
    DiskRoom disk_room() const;
    // enforce_budget, with `incoming` bytes about to be written that the disk must also take.
    void make_room(int64_t incoming) const;
    std::filesystem::path path_of(uint64_t key) const;
    bool write_file(const std::filesystem::path& path, std::span<const std::span<const char>> parts) const;

    std::filesystem::path root_, folder_;
    std::string identity_;
    int64_t block_bytes_;
    int64_t budget_bytes_;
    Log log_;
};

}  // namespace llamadesk
