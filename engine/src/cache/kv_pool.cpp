#include "cache/kv_pool.h"

#include <algorithm>

#include "core/error.h"

namespace llamadesk {

namespace {

// The key of a full block: FNV-1a over the key of the block before it (0 for the first) and the
// block's tokens, so it names the whole prefix through the block's end. Never 0. A hash: whoever
// finds a block by key compares the tokens too.
uint64_t chain_key(uint64_t previous_key, std::span<const int32_t> block_tokens) {
    uint64_t h = 1469598103934665603ull ^ previous_key;
    for (int32_t t : block_tokens) {
        h ^= uint64_t(uint32_t(t));
        h *= 1099511628211ull;
    }
    return h == 0 ? 1 : h;  // 0 means "not registered" in the pool
}

}  // namespace

KvPool::KvPool(const KvLayout& layout, int n_blocks, int64_t bytes_per_block)
    : layout_(layout), bytes_per_block_(bytes_per_block), allocator_(n_blocks), users_(size_t(n_blocks), 0),
      key_of_(size_t(n_blocks), 0), restored_(size_t(n_blocks), false) {}

int KvPool::share_prefix(ConversationId id, std::span<const int32_t> tokens, int limit) {
    const int bs = layout_.block_size;
    auto it = sequences_.find(id);
    SequenceBlocks* seq = it == sequences_.end() ? nullptr : &it->second;
    const int cached = seq ? seq->n_cached : 0;
    int32_t previous_block = cached >= bs ? seq->block_table[size_t(cached / bs - 1)] : -1;
    for (const uint64_t k : next_chain_keys(id, tokens, limit)) {
        const int b = seq ? seq->n_cached / bs : 0;
        const std::span<const int32_t> block_tokens = tokens.subspan(size_t(b) * size_t(bs), size_t(bs));
        const Registered* r = lookup(k, previous_block, block_tokens);
        if (!r) break;
        if (!seq) {
            seq = &sequences_[id];
            seq->last_used = ++tick_;
        }
        if (int(seq->block_table.size()) > b) {  // a reserved block that holds nothing yet
            let_go(seq->block_table[size_t(b)]);
            seq->block_table[size_t(b)] = r->block;
        } else {
            seq->block_table.push_back(r->block);
        }
        if (++users_[size_t(r->block)] == 2) ++blocks_shared_;
        seq->chain.push_back(k);
        seq->n_cached = (b + 1) * bs;
        shared_tokens_ += bs;
        previous_block = r->block;
    }
    return seq ? seq->n_cached : 0;
}

int KvPool::evictable_blocks(ConversationId id, std::span<const ConversationId> keep) const {
    std::vector<int> left = users_;  // users that would remain, per block
    int freed = 0;
    for (const auto& [other, seq] : sequences_) {
        if (other == id || std::find(keep.begin(), keep.end(), other) != keep.end()) continue;
        for (int32_t block : seq.block_table)
            if (--left[size_t(block)] == 0) ++freed;
    }
    return freed;
}

std::vector<Eviction> KvPool::reserve(ConversationId id, int n_tokens, std::span<const ConversationId> keep) {
    if (n_tokens < 0) fail(ErrorCode::Internal, "KV pool: cannot reserve " + std::to_string(n_tokens) + " positions");
    const int have = int(block_table(id).size());
    const int needed = blocks_for(n_tokens) - have;
    auto kept = [&](ConversationId other) { return std::find(keep.begin(), keep.end(), other) != keep.end(); };
    if (needed > allocator_.n_free() && needed > allocator_.n_free() + evictable_blocks(id, keep)) {
        fail(ErrorCode::OutOfMemory,
             "the KV cache is too small: this conversation needs " + std::to_string(n_tokens) +
                 " tokens (" + std::to_string(blocks_for(n_tokens)) + " blocks of " +
                 std::to_string(layout_.block_size) + ") but the pool has " +
                 std::to_string(allocator_.n_total()) + " blocks in all" +
                 (keep.empty() ? std::string()
                               : " and the " + std::to_string(keep.size()) +
                                     " other conversations answering at the same time hold some") +
                 "; raise the KV cache budget");
    }

    const auto evicted_before = [&](const auto& a, const auto& b) {
        const bool a_first = evict_first_.count(a.first) != 0, b_first = evict_first_.count(b.first) != 0;
        return a_first != b_first ? a_first : a.second.last_used < b.second.last_used;
    };
    std::vector<Eviction> evicted;
    while (allocator_.n_free() < needed) {
        auto victim = sequences_.end();
        for (auto it = sequences_.begin(); it != sequences_.end(); ++it)
            if (it->first != id && !kept(it->first) && (victim == sequences_.end() || evicted_before(*it, *victim)))
                victim = it;
        // Found: the check above counted enough blocks held by others.
        evicted.push_back({victim->first, victim->second.n_cached});
        shrink(victim->second, 0);
        sequences_.erase(victim);
        ++evictions_;
    }
    if (needed <= 0 && have == 0) return evicted;  // nothing to hold, so nothing to remember
    SequenceBlocks& seq = sequences_[id];
    seq.last_used = ++tick_;
    for (int i = 0; i < needed; ++i) seq.block_table.push_back(take_new_block());
    return evicted;
}

int KvPool::prepare_write(ConversationId id, int start, int end, std::vector<Eviction>* evicted,
                          std::span<const ConversationId> keep) {
    auto it = sequences_.find(id);
    const int b = start / layout_.block_size;
    if (it == sequences_.end() || b >= int(it->second.block_table.size())) return start;
    SequenceBlocks& seq = it->second;
    const int32_t block = seq.block_table[size_t(b)];
    if (writable(block)) return start;
    if (users_[size_t(block)] == 1) {  // only registered: it stays, private again
        unregister(block);
        seq.chain.resize(std::min(seq.chain.size(), size_t(b)));
        return start;
    }
    // Shared: given up, and a fresh block reserved in its place, computed from where it began.
    const int block_start = b * layout_.block_size;
    truncate(id, block_start);
    *evicted = reserve(id, end, keep);
    return block_start;
}

void KvPool::set_cached(ConversationId id, int n_tokens, std::span<const int32_t> tokens) {
    auto it = sequences_.find(id);
    const int capacity = it == sequences_.end() ? 0 : int(it->second.block_table.size()) * layout_.block_size;
    if (n_tokens < (it == sequences_.end() ? 0 : it->second.n_cached) || n_tokens > capacity ||
        size_t(n_tokens) > tokens.size())
        fail(ErrorCode::Internal, "KV pool: conversation " + std::to_string(id) + " cannot cache " +
                                      std::to_string(n_tokens) + " positions in " + std::to_string(capacity) +
                                      " reserved");
    if (it == sequences_.end()) return;
    SequenceBlocks& seq = it->second;
    seq.n_cached = n_tokens;
    const int bs = layout_.block_size;
    for (const uint64_t k : continue_chain(&seq, tokens, std::min(n_tokens / bs, seq.private_from))) {
        const size_t b = seq.chain.size();
        const std::span<const int32_t> block_tokens = tokens.subspan(b * size_t(bs), size_t(bs));
        seq.chain.push_back(k);
        const int32_t block = seq.block_table[b];
        if (key_of_[size_t(block)] == 0 && !registered_.count(k)) {
            registered_.emplace(k, Registered{block, b > 0 ? seq.block_table[b - 1] : -1,
                                              std::vector<int32_t>(block_tokens.begin(), block_tokens.end())});
            key_of_[size_t(block)] = k;
        }
    }
}

void KvPool::truncate(ConversationId id, int n_tokens) {
    if (n_tokens < 0) fail(ErrorCode::Internal, "KV pool: cannot keep " + std::to_string(n_tokens) + " positions");
    auto it = sequences_.find(id);
    if (it == sequences_.end()) return;
    shrink(it->second, n_tokens);
    if (it->second.block_table.empty()) sequences_.erase(it);
}

void KvPool::release(ConversationId id) { truncate(id, 0); }

void KvPool::set_evict_first(ConversationId id, bool evict_first) {
    if (evict_first)
        evict_first_.insert(id);
    else
        evict_first_.erase(id);
}

void KvPool::shrink(SequenceBlocks& seq, int n_tokens) {
    const int bs = layout_.block_size;
    seq.n_cached = std::min(seq.n_cached, n_tokens);
    size_t keep = size_t(blocks_for(n_tokens));
    // A block that keeps only part of its positions will be written again: it cannot stay shared
    // or registered.
    if (n_tokens % bs != 0 && keep <= seq.block_table.size() && keep > 0) {
        const int32_t partial = seq.block_table[keep - 1];
        if (users_[size_t(partial)] > 1) {
            --keep;
            seq.n_cached = std::min(seq.n_cached, int(keep) * bs);
        } else {
            unregister(partial);
        }
    }
    while (seq.block_table.size() > keep) {
        let_go(seq.block_table.back());
        seq.block_table.pop_back();
    }
    seq.chain.resize(std::min(seq.chain.size(), size_t(seq.n_cached / bs)));
    if (int(seq.block_table.size()) <= seq.private_from) seq.private_from = INT_MAX;  // all faithful again
}

void KvPool::make_private_from(ConversationId id, int first_block, const std::function<void(int32_t, int32_t)>& copy) {
    auto it = sequences_.find(id);
    if (it == sequences_.end() || first_block < 0)
        fail(ErrorCode::Internal, "KV pool: conversation " + std::to_string(id) + " has no blocks to shift");
    SequenceBlocks& seq = it->second;
    const size_t first = size_t(first_block);
    int copies = 0;
    for (size_t b = first; b < seq.block_table.size(); ++b) copies += users_[size_t(seq.block_table[b])] > 1 ? 1 : 0;
    if (copies > allocator_.n_free())
        fail(ErrorCode::OutOfMemory, "the KV cache has " + std::to_string(allocator_.n_free()) +
                                         " free blocks; shifting this conversation needs " + std::to_string(copies) +
                                         " for blocks it shares with others; raise the KV cache budget");
    for (size_t b = first; b < seq.block_table.size(); ++b) {
        int32_t& block = seq.block_table[b];
        if (users_[size_t(block)] > 1) {
            const int32_t own = take_new_block();
            copy(block, own);
            let_go(block);
            block = own;
        } else {
            unregister(block);
        }
    }
    seq.chain.resize(std::min(seq.chain.size(), first));
    seq.private_from = std::min(seq.private_from, first_block);
}

int KvPool::faithful_blocks(ConversationId id) const {
    const SequenceBlocks* seq = find(id);
    return seq ? std::min(seq->n_cached / layout_.block_size, seq->private_from) : 0;
}

int32_t KvPool::take_new_block() {
    LLAMADESK_EXPECTS(allocator_.n_free() > 0);  // callers make room first
    const int32_t block = *allocator_.allocate();
    users_[size_t(block)] = 1;
    restored_[size_t(block)] = false;
    return block;
}

void KvPool::let_go(int32_t block) {
    LLAMADESK_EXPECTS(users_[size_t(block)] > 0);
    if (--users_[size_t(block)] == 1) --blocks_shared_;
    if (users_[size_t(block)] > 0) return;
    unregister(block);
    allocator_.release(block);
}

void KvPool::unregister(int32_t block) {
    if (key_of_[size_t(block)] == 0) return;
    registered_.erase(key_of_[size_t(block)]);
    key_of_[size_t(block)] = 0;
}

std::vector<uint64_t> KvPool::continue_chain(const SequenceBlocks* seq, std::span<const int32_t> tokens, int n_blocks) const {
    const size_t bs = size_t(layout_.block_size);
    const size_t first = seq ? seq->chain.size() : 0;
    std::vector<uint64_t> keys;
    for (size_t b = first; b < size_t(n_blocks) && (b + 1) * bs <= tokens.size(); ++b)
        keys.push_back(chain_key(b == first ? (first > 0 ? seq->chain[first - 1] : 0) : keys.back(),
                                 tokens.subspan(b * bs, bs)));
    return keys;
}

std::span<const uint64_t> KvPool::chain_keys(ConversationId id) const {
    const SequenceBlocks* seq = find(id);
    if (!seq) return {};
    return std::span<const uint64_t>(seq->chain).first(size_t(faithful_blocks(id)));
}

std::vector<uint64_t> KvPool::next_chain_keys(ConversationId id, std::span<const int32_t> tokens, int limit) const {
    const SequenceBlocks* seq = find(id);
    const int bs = layout_.block_size;
    if (seq && (seq->n_cached % bs != 0 || seq->n_cached / bs >= seq->private_from)) return {};
    LLAMADESK_EXPECTS(!seq || seq->chain.size() == size_t(seq->n_cached / bs));
    return continue_chain(seq, tokens, limit / bs);
}

const KvPool::Registered* KvPool::lookup(uint64_t k, int32_t previous, std::span<const int32_t> tokens) const {
    auto it = registered_.find(k);
    LLAMADESK_EXPECTS(it == registered_.end() || key_of_[size_t(it->second.block)] == k);
    if (it == registered_.end() || it->second.previous != previous ||
        !std::equal(tokens.begin(), tokens.end(), it->second.tokens.begin(), it->second.tokens.end()))
        return nullptr;  // the key is a hash: the tokens and the block before decide
    return &it->second;
}

const KvPool::SequenceBlocks* KvPool::find(ConversationId id) const {
    auto it = sequences_.find(id);
    return it == sequences_.end() ? nullptr : &it->second;
}

int KvPool::n_cached(ConversationId id) const {
    const SequenceBlocks* seq = find(id);
    return seq ? seq->n_cached : 0;
}

const std::vector<int32_t>& KvPool::block_table(ConversationId id) const {
    static const std::vector<int32_t> none;
    const SequenceBlocks* seq = find(id);
    return seq ? seq->block_table : none;
}

BlockTableView KvPool::table(ConversationId id) const {
    const std::vector<int32_t>& blocks = block_table(id);
    return {blocks.data(), int(blocks.size())};
}

PoolStats KvPool::stats() const {
    PoolStats s;
    s.block_size = layout_.block_size;
    s.blocks_total = allocator_.n_total();
    s.blocks_used = allocator_.n_used();
    s.blocks_shared = blocks_shared_;
    s.bytes_total = int64_t(s.blocks_total) * bytes_per_block_;
    s.bytes_used = int64_t(s.blocks_used) * bytes_per_block_;
    s.n_conversations = int(sequences_.size());
    s.evictions = evictions_;
    s.reprefilled_tokens = reprefilled_tokens_;
    s.shared_tokens = shared_tokens_;
    return s;
}

}  // namespace llamadesk
