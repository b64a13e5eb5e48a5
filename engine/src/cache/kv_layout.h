// The one place that maps a conversation's token position to KV cache storage.
//
// Keys and values live in a pool of fixed-size blocks shared by all conversations. A block holds
// block_size consecutive positions of one conversation for every layer. A conversation's block
// table lists its blocks in position order, so position p lives in block_table[p / block_size] at
// offset p % block_size. Within a block the layout is
//     [layer][k|v][kv_head][offset][head_dim]
// so that one kv head's keys for a block are one contiguous block_size x head_dim tile.
// Query head h reads kv head h / n_rep (grouped-query attention, nothing copied).
#pragma once

#include <cstdint>

#include "core/host_device.h"

namespace llamadesk {

struct KvLayout {
    int n_layers = 0;
    int n_kv_heads = 0;
    int head_dim = 0;
    // Larger blocks, longer runs of one kv head, do not make the CPU's decode attention read faster:
    // llamadesk-attention-bench --block-size 16, 32, 64, 128 at 4096 positions, 2 Xeon cores: 34.7 to
    // 36.5 ms per token for every size, about 15 GB/s of a 29 GB/s probe.
    int block_size = 16;

    // elements of one block (K and V, all layers)
    LLAMADESK_HOST_DEVICE int64_t block_elements() const {
        return int64_t(n_layers) * 2 * n_kv_heads * block_size * head_dim;
    }
    // blocks that hold positions [0, n_positions): the one statement of the rounding up
    LLAMADESK_HOST_DEVICE int64_t blocks_for(int64_t n_positions) const {
        return (n_positions + block_size - 1) / block_size;
    }
    // element offset of (block, layer, K or V, kv_head, offset in block, 0) in the pool
    LLAMADESK_HOST_DEVICE int64_t offset(int32_t block, int layer, int is_value, int kv_head, int in_block) const {
        return (((int64_t(block) * n_layers + layer) * 2 + is_value) * n_kv_heads + kv_head)
                   * int64_t(block_size) * head_dim
               + int64_t(in_block) * head_dim;
    }
};

struct BlockTableView {
    const int32_t* blocks = nullptr;  // (n_blocks,) block ids in position order
    int n_blocks = 0;
};

struct KvSlot {
    int32_t block;
    int32_t in_block;
};

LLAMADESK_HOST_DEVICE inline KvSlot kv_slot(const int32_t* block_table, int block_size, int pos) {
    return {block_table[pos / block_size], pos % block_size};
}

}  // namespace llamadesk
