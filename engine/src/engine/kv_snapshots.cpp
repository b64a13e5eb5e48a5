#include "engine/kv_snapshots.h"

#include "chat/chat_template.h"

#include <algorithm>
#include <vector>

#include "model/checkpoint_identity.h"
#include "model/weight_types.h"

namespace llamadesk {

std::unique_ptr<SnapshotStore> open_snapshot_store(const LoadedModel& m, const SnapshotSettings& settings) {
    if (settings.folder.empty()) return nullptr;
    // Everything a block's bytes depend on besides its tokens: a CUDA cache differs from the CPU's
    // in rounding, so each backend keeps its own.
    const KvLayout& layout = m.pool->layout();
    const std::string& tokenizer_file = m.checkpoint.tokenizer.model_file;
    const std::string identity = checkpoint_identity(m.checkpoint.path) + "|tokenizer " +
                                 (tokenizer_file.empty() ? "embedded" : checkpoint_identity(tokenizer_file)) + "|kv " +
                                 dtype_name(m.backend->kv_dtype()) + "|" + m.backend->name() + "|layers " +
                                 std::to_string(layout.n_layers) + " kv_heads " + std::to_string(layout.n_kv_heads) +
                                 " head_dim " + std::to_string(layout.head_dim) + " block " +
                                 std::to_string(layout.block_size);
    return std::make_unique<SnapshotStore>(settings.folder, identity, m.pool->bytes_per_block(),
                                           settings.budget_bytes, settings.on_log);
}

int restore_from_disk(LoadedModel& m, ConversationId id, std::span<const int32_t> history, int limit, int known_end) {
    KvPool& pool = *m.pool;
    const SnapshotStore& store = *m.snapshots;
    const int bs = pool.layout().block_size;
    const int cached = pool.n_cached(id);
    std::vector<std::byte> bytes(size_t(store.block_bytes()));
    int restored = 0;
    const std::vector<uint64_t> keys = pool.next_chain_keys(id, history, limit);
    for (size_t i = 0; i < keys.size(); ++i) {
        const uint64_t key = keys[i];
        const int b = cached / bs + int(i);
        const int begin = b * bs, end = begin + bs;
        std::string why;
        if (!store.contains(key) || !store.read(key, history.first(size_t(end)), bytes, &why)) {
            // A rejected file always says why; a missing one only when nothing of a history that
            // existed before this turn was on disk (the tail after the last saved block is never).
            if (begin < known_end && (!why.empty() || restored == 0))
                store.log("KV snapshot: " + (why.empty() ? std::string("none on disk") : "ignored " + why) +
                          "; prefilling positions " + std::to_string(begin) + " to " + std::to_string(known_end - 1) +
                          " of conversation " + std::to_string(id));
            break;
        }
        const int32_t block = pool.block_table(id)[size_t(b)];
        m.backend->write_kv_block(block, bytes);
        pool.mark_restored(block);
        restored += bs;
    }
    if (restored > 0) {
        pool.set_cached(id, cached + restored, history);
        store.log("KV snapshot: restored " + std::to_string(restored) + " positions of conversation " +
                  std::to_string(id) + " from " + store.folder().string());
    }
    return restored;
}

namespace {

// The conversation's text, spelled out unambiguously: what a saved history is looked up by.
std::string text_key(const Sequence& conv) {
    std::string key = chat_format_key(conv.format);
    auto add = [&](const std::string& text) { key += "|" + std::to_string(text.size()) + ":" + text; };
    add(conv.system_prompt);
    for (const Turn& t : conv.turns) {
        add(t.user);
        add(t.answer);
    }
    return key;
}

}  // namespace

int save_to_disk(const LoadedModel& m, const Sequence& conv) {
    const KvPool& pool = *m.pool;
    const SnapshotStore& store = *m.snapshots;
    const std::span<const int32_t> history = conv.history;
    const int bs = pool.layout().block_size;
    const std::vector<int32_t>& table = pool.block_table(conv.id);
    // Only blocks that computing the history from the start would give: after a context shift the
    // later ones were computed with tokens no longer in it.
    const std::span<const uint64_t> keys = pool.chain_keys(conv.id);
    // Last block first, so a conversation's first block is its most recently used: the budget then
    // takes the ends of histories before their beginnings, which every later block needs.
    std::vector<std::byte> bytes(size_t(store.block_bytes()));
    int written = 0;
    for (int b = int(keys.size()) - 1; b >= 0; --b) {
        if (store.touch(keys[size_t(b)])) continue;
        m.backend->read_kv_block(table[size_t(b)], bytes);
        if (!store.write(keys[size_t(b)], history.first(size_t(b + 1) * size_t(bs)), bytes)) break;
        ++written;
    }
    if (!keys.empty()) {
        SavedHistory saved{conv.history, {}, {}};
        for (const Turn& t : conv.turns) {
            saved.turn_begins.push_back(t.begin);
            saved.turn_ends.push_back(t.end);
        }
        store.write_history(text_key(conv), saved);
    }
    store.enforce_budget();
    return written;
}

bool restore_history(const LoadedModel& m, Sequence& conv) {
    SavedHistory saved;
    std::string why;
    if (!m.snapshots->read_history(text_key(conv), &saved, &why)) {
        if (!why.empty()) m.snapshots->log("KV snapshot: ignored history " + why);
        return false;
    }
    bool fits = saved.turn_begins.size() == conv.turns.size();
    int at = 0;
    for (size_t i = 0; fits && i < conv.turns.size(); ++i) {
        fits = saved.turn_begins[i] == at && saved.turn_ends[i] >= at && saved.turn_ends[i] <= int(saved.tokens.size());
        at = saved.turn_ends[i];
    }
    fits = fits && at == int(saved.tokens.size()) &&
           std::all_of(saved.tokens.begin(), saved.tokens.end(), [&](int32_t t) { return t >= 0 && t < m.vocab_size(); });
    if (!fits) {
        m.snapshots->log("KV snapshot: ignored a saved history that does not fit conversation " + std::to_string(conv.id));
        return false;
    }
    conv.history = std::move(saved.tokens);
    for (size_t i = 0; i < conv.turns.size(); ++i) {
        conv.turns[i].begin = saved.turn_begins[i];
        conv.turns[i].end = saved.turn_ends[i];
    }
    conv.history_stale = false;
    return true;
}

}  // namespace llamadesk
