#include "engine/kv_pool.h"

#include <algorithm>

#include "core/error.h"

namespace llamadesk {

KvPool::KvPool(const KvLayout& layout, int n_blocks, int64_t bytes_per_block)
    : layout_(layout), bytes_per_block_(bytes_per_block), allocator_(n_blocks) {}

void KvPool::reserve(Conversation& conv, int n_tokens, ConversationMap& conversations) {
    const int needed = blocks_for(n_tokens) - int(conv.block_table.size());
    if (needed <= 0) return;

    int held_by_others = 0;
    for (const auto& [id, other] : conversations)
        if (id != conv.id) held_by_others += int(other.block_table.size());
    if (needed > allocator_.n_free() + held_by_others) {
        fail(ErrorCode::OutOfMemory,
             "the KV cache is too small: this conversation needs " + std::to_string(n_tokens) +
                 " tokens (" + std::to_string(blocks_for(n_tokens)) + " blocks of " +
                 std::to_string(layout_.block_size) + ") but the pool has " +
                 std::to_string(allocator_.n_total()) + " blocks in all; raise the KV cache budget");
    }

    while (allocator_.n_free() < needed) {
        Conversation* victim = nullptr;
        for (auto& [id, other] : conversations) {
            if (id == conv.id || other.block_table.empty()) continue;
            if (!victim || other.last_used < victim->last_used) victim = &other;
        }
        evict(*victim);  // non-null: the check above counted enough blocks held by others
    }
    for (int i = 0; i < needed; ++i) conv.block_table.push_back(*allocator_.allocate());
}

void KvPool::shrink_to_cached(Conversation& conv) {
    const size_t keep = size_t(blocks_for(conv.n_cached));
    while (conv.block_table.size() > keep) {
        allocator_.release(conv.block_table.back());
        conv.block_table.pop_back();
    }
}

void KvPool::release(Conversation& conv) {
    conv.n_cached = 0;
    conv.evicted_tokens = 0;
    shrink_to_cached(conv);
}

void KvPool::evict(Conversation& victim) {
    victim.evicted_tokens = std::max(victim.evicted_tokens, victim.n_cached);
    victim.n_cached = 0;
    shrink_to_cached(victim);
    ++victim.times_evicted;
    ++evictions_;
}

PoolStats KvPool::stats(int n_conversations) const {
    PoolStats s;
    s.block_size = layout_.block_size;
    s.blocks_total = allocator_.n_total();
    s.blocks_used = allocator_.n_used();
    s.bytes_total = int64_t(s.blocks_total) * bytes_per_block_;
    s.bytes_used = int64_t(s.blocks_used) * bytes_per_block_;
    s.n_conversations = n_conversations;
    s.evictions = evictions_;
    s.reprefilled_tokens = reprefilled_tokens_;
    return s;
}

}  // namespace llamadesk
