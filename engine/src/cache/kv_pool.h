// The KV pool's manager: each conversation's block table, how many of its positions hold keys and
// values, which conversation to evict when the pool is full (least recently used), and which full
// blocks several conversations share. Which blocks are free is BlockAllocator's; the keys and
// values themselves live in the backend. A conversation keeps its tokens and turns; the pool keeps
// its blocks.
//
// Shared prefixes, as vLLM's prefix caching: a full block whose positions are all cached is
// registered under its tokens and the block before it. A conversation whose history begins with the
// same tokens (the same system prompt, a regenerate, an edit of a late turn) takes those blocks
// instead of computing them, each block counting its users. A registered or shared block is never
// written again: a conversation that must write into one gives it up and recomputes its positions
// (at most block_size - 1 tokens), which costs less than copying it.
//
// A context shift (engine/context_shift.h) rewrites a conversation's blocks from some point on with
// keys and values computed while tokens since dropped were in view: from that block on, none is
// registered, shared or saved (faithful_blocks), until the cache is cut back before it.
#pragma once

#include <climits>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <span>
#include <unordered_map>
#include <vector>

#include "cache/block_allocator.h"
#include "cache/kv_layout.h"
#include "cache/pool_stats.h"
#include "core/ids.h"

namespace llamadesk {

struct Eviction {
    ConversationId id;
    int n_cached;  // positions whose keys and values it lost
};

// Told which other conversations lost their cache to make room for the one being served.
using EvictionHandler = std::function<void(const std::vector<Eviction>&)>;

class KvPool {
public:
    KvPool(const KvLayout& layout, int n_blocks, int64_t bytes_per_block);

    const KvLayout& layout() const { return layout_; }
    int64_t bytes_per_block() const { return bytes_per_block_; }
    int blocks_for(int n_tokens) const { return int(layout_.blocks_for(n_tokens)); }

    // Gives id, from its first uncached position on, the registered blocks that hold exactly
    // tokens' keys and values, as long as they match and lie before `limit` (so the position
    // a forward pass rewrites is never in a shared block). Returns id's cached count after.
    int share_prefix(ConversationId id, std::span<const int32_t> tokens, int limit);
    // Makes id the most recently used and grows its block table to cover n_tokens positions. When
    // the pool is short, the least recently used other conversations lose all their blocks (a
    // block is freed when its last user lets go); they are returned, in the order evicted. The
    // conversations in `keep` (others answering in the same batch) are never evicted. Throws
    // EngineError(OutOfMemory), evicting nothing, when even evicting every other conversation
    // would not make room.
    std::vector<Eviction> reserve(ConversationId id, int n_tokens, std::span<const ConversationId> keep = {});
    // Before a forward pass writes positions [start, end): if start falls in a registered block
    // only id holds, the block is unregistered; if in a shared one, id gives it up for a fresh
    // block (reserved as reserve() does, evictions in *evicted) and its cache ends where the block
    // began. Returns the position to compute from: start, or that block's first position.
    int prepare_write(ConversationId id, int start, int end, std::vector<Eviction>* evicted,
                      std::span<const ConversationId> keep = {});
    // Positions [0, n_tokens) of id now hold the keys and values of tokens[0, n_tokens); its full
    // blocks are registered for sharing. Precondition: reserved, and n_tokens <= tokens.size().
    void set_cached(ConversationId id, int n_tokens, std::span<const int32_t> tokens);
    // Keeps only id's first n_tokens positions: its cached count and its blocks shrink to them (a
    // shared or registered block that would keep only part of its positions goes too).
    void truncate(ConversationId id, int n_tokens);
    // Gives up all of id's blocks and forgets it.
    void release(ConversationId id);
    // Conversations marked so (the local server's requests) are evicted before any other, least
    // recently used first among them; the mark outlives release() until it is taken off.
    void set_evict_first(ConversationId id, bool evict_first);
    // Before a context shift rewrites id's blocks from first_block on: each becomes id's alone (a
    // block another conversation holds is swapped for a free one, whose bytes copy(from, to) fills;
    // a registered one is unregistered), and stays out of sharing until the cache is cut back
    // before it. Throws EngineError(OutOfMemory), changing nothing, when no block is free for a copy.
    void make_private_from(ConversationId id, int first_block, const std::function<void(int32_t, int32_t)>& copy);
    // id's leading blocks whose keys and values are what computing its history from the start gives:
    // the ones that may be shared and saved to disk.
    int faithful_blocks(ConversationId id) const;

    // Chain keys name a full block by its tokens and every token before it (see chain_key() in
    // kv_pool.cpp): shared prefixes are found by them, and KV snapshots name their files by them.
    // The keys of id's faithful blocks, in order, computed once as each was filled.
    std::span<const uint64_t> chain_keys(ConversationId id) const;
    // The keys tokens' next full blocks would have, from id's first uncached block on and ending by
    // `limit` positions, continuing its chain: where a block might be found on disk. Empty when id's
    // cache does not end on a faithful block's end.
    std::vector<uint64_t> next_chain_keys(ConversationId id, std::span<const int32_t> tokens, int limit) const;

    int n_cached(ConversationId id) const;
    const std::vector<int32_t>& block_table(ConversationId id) const;  // empty when it holds none
    BlockTableView table(ConversationId id) const;
    int users(int32_t block) const { return users_[size_t(block)]; }  // conversations holding it
    // Whether a block's keys and values were read from disk (KvSnapshots) rather than computed:
    // shown in the inspector until the block is freed.
    bool restored(int32_t block) const { return restored_[size_t(block)]; }
    void mark_restored(int32_t block) { restored_[size_t(block)] = true; }

    PoolStats stats() const;
    void count_reprefill(int n_tokens) { reprefilled_tokens_ += n_tokens; }

private:
    struct SequenceBlocks {
        std::vector<int32_t> block_table;  // pool block ids, in position order
        std::vector<uint64_t> chain;       // chain key of each faithful full block, in order
        int n_cached = 0;                  // positions [0, n_cached) hold keys and values
        int private_from = INT_MAX;        // first block a context shift rewrote (see above)
        uint64_t last_used = 0;            // tick of the last reserve(), for LRU eviction
    };
    // A full block's content: its tokens and the block before it (-1 for the first).
    struct Registered {
        int32_t block;
        int32_t previous;
        std::vector<int32_t> tokens;
    };

    const SequenceBlocks* find(ConversationId id) const;
    // The keys of tokens' full blocks after seq's chain (none yet: from the first), up to n_blocks.
    std::vector<uint64_t> continue_chain(const SequenceBlocks* seq, std::span<const int32_t> tokens, int n_blocks) const;
    // Blocks that evicting every conversation but id and those in keep would free.
    int evictable_blocks(ConversationId id, std::span<const ConversationId> keep) const;
    void shrink(SequenceBlocks& seq, int n_tokens);
    int32_t take_new_block();
    void let_go(int32_t block);
    void unregister(int32_t block);  // its content may change: no longer offered for sharing
    bool writable(int32_t block) const { return users_[size_t(block)] == 1 && key_of_[size_t(block)] == 0; }
    const Registered* lookup(uint64_t key, int32_t previous, std::span<const int32_t> tokens) const;

    KvLayout layout_;
    int64_t bytes_per_block_;
    BlockAllocator allocator_;
    std::map<ConversationId, SequenceBlocks> sequences_;  // only conversations that hold blocks
    std::set<ConversationId> evict_first_;
    std::vector<int> users_;                        // per block: block tables holding it
    std::vector<uint64_t> key_of_;                  // per block: its registration key, 0 when none
    std::vector<bool> restored_;                    // per block: read from disk
    std::unordered_map<uint64_t, Registered> registered_;
    int blocks_shared_ = 0;                         // blocks with more than one user
    uint64_t tick_ = 0;
    int64_t evictions_ = 0;
    int64_t reprefilled_tokens_ = 0;
    int64_t shared_tokens_ = 0;
};

}  // namespace llamadesk
