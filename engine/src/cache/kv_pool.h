// Which conversation holds which blocks of the KV pool, and eviction when the pool is full.
// Bookkeeping only: the keys and values themselves live in the backend's pool storage.
#pragma once

#include <cstdint>
#include <map>

#include "cache/block_allocator.h"
#include "cache/kv_layout.h"
#include "engine/conversation.h"

namespace llamadesk {

using ConversationMap = std::map<ConversationId, Conversation>;

class KvPool {
public:
    KvPool(const KvLayout& layout, int n_blocks, int64_t bytes_per_block);

    const KvLayout& layout() const { return layout_; }
    int64_t bytes_per_block() const { return bytes_per_block_; }
    int blocks_for(int n_tokens) const { return (n_tokens + layout_.block_size - 1) / layout_.block_size; }

    // Grows conv's block table to cover n_tokens positions. When the pool is short, the least
    // recently used other conversations lose all their blocks (they prefill again when next
    // used). Throws EngineError(OutOfMemory), evicting nothing, when even that is not enough.
    void reserve(Conversation& conv, int n_tokens, ConversationMap& conversations);
    // Frees the blocks past those needed by conv's first n_cached tokens.
    void shrink_to_cached(Conversation& conv);
    // Frees all of conv's blocks; its cache then holds nothing.
    void release(Conversation& conv);

    PoolStats stats(int n_conversations) const;
    void count_reprefill(int n_tokens) { reprefilled_tokens_ += n_tokens; }

private:
    void evict(Conversation& victim);

    KvLayout layout_;
    int64_t bytes_per_block_;
    BlockAllocator allocator_;
    int64_t evictions_ = 0;
    int64_t reprefilled_tokens_ = 0;
};

}  // namespace llamadesk
