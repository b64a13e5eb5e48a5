// Grouped-query attention over the paged KV cache. Query head h reads kv head h / n_rep straight
// from the pool: keys and values are never copied or repeated. Work is split into (kv head, chunk
// of query tokens, part of the positions) items that run in parallel; within an item the n_rep
// query heads of the kv head and the chunk's tokens form one small matrix, so each key tile is
// loaded once for all of them. Decode has one chunk, so a layer would have only n_kv_heads items (8
// for Llama 3 8B), and threads past 8 would sit idle: there the positions are split into parts, as
// flash-decoding does, each part's softmax and output merged by the parts' maxima and sums.
#pragma once

#include <vector>

#include "backends/cpu/kernels.h"
#include "backends/cpu/kv_storage.h"
#include "backends/cpu/thread_pool.h"
#include "model/model_config.h"

namespace llamadesk::cpu {

class Attention {
public:
    Attention(const ModelConfig& config, int n_threads);

    // out (n, n_heads * head_dim) = softmax(q k^T / sqrt(head_dim)) v for the n tokens at positions
    // start_pos .. start_pos + n - 1, each attending to positions 0 .. its own (causal). Reads the
    // keys and values of positions 0 .. start_pos + n - 1 of `layer` through the block table, in
    // the cache's own element type (widened in registers, never copied to f32 first).
    void run(ThreadPool& pool, const Kernels& kernels, int layer, const float* q, int n, int start_pos,
             const KvStorage& kv, BlockTableView table, float* out);

private:
    void merge_parts(int n, int parts, float* out);
    // partials_'s layout: item (chunk, kv head, part)'s output rows, then each row's (max, sum)
    size_t part_floats() const { return size_t(kQueryChunk * (n_heads_ / n_kv_heads_)) * size_t(head_dim_ + 2); }
    float* partial(int chunk, int kv_head, int part, int parts) {
        return partials_.data() + size_t((chunk * n_kv_heads_ + kv_head) * parts + part) * part_floats();
    }
    float* scale_of(float* partial, int row) const {
        return partial + size_t(kQueryChunk * (n_heads_ / n_kv_heads_)) * size_t(head_dim_) + 2 * size_t(row);
    }

    static constexpr int kQueryChunk = 16;  // query tokens per work item
    // Heads narrower than a vector (stories260K's 8) make dot products along head_dim scalar; for
    // them keys and values are transposed so the kernels run along positions instead.
    static constexpr int kNarrowHead = 16;
    // Parts of the positions: as many as give each thread kItemsPerThread items, each at least
    // kMinPartBlocks blocks of the cache.
    static constexpr int kItemsPerThread = 8;
    static constexpr int kMinPartBlocks = 4;

    struct Scratch {
        // Sized by the positions attended so far, not by the context length a file claims.
        std::vector<float> queries;  // (kQueryChunk * n_rep, head_dim), scaled by 1/sqrt(head_dim)
        std::vector<float> scores;   // (kQueryChunk * n_rep, positions)
        std::vector<float> outputs;  // (kQueryChunk * n_rep, head_dim)
        std::vector<float> keys_t;   // narrow heads: (head_dim, positions), keys by dimension
        std::vector<float> values_t; // narrow heads: (head_dim, positions)
        // A q8_0 cache: the queries quantized as the block kernels take activations.
        std::vector<int8_t> queries_q;     // (kQueryChunk * n_rep, head_dim)
        std::vector<float> queries_d, queries_d_sum;  // (kQueryChunk * n_rep, head_dim / 32)
        std::vector<int32_t> queries_half_sums;       // (kQueryChunk * n_rep, head_dim / 8)
    };

    int n_heads_, n_kv_heads_, head_dim_;
    std::vector<Scratch> scratch_;  // one per thread
    // Where positions are split: each item's output rows (normalized within its part), then each
    // row's SoftmaxScale, merged once all items are done.
    std::vector<float> partials_;
};

}  // namespace llamadesk::cpu
