#include "backends/cpu/attention.h"

#include <algorithm>
#include <cmath>

#include "backends/cpu/prefetch.h"
#include "model/dtype.h"

namespace llamadesk::cpu {

Attention::Attention(const ModelConfig& config, int n_threads)
    : n_heads_(config.n_heads), n_kv_heads_(config.n_kv_heads), head_dim_(config.head_dim()),
      scratch_(size_t(n_threads)) {
    const size_t rows = size_t(kQueryChunk) * size_t(config.n_rep());
    for (Scratch& s : scratch_) {
        s.queries.resize(rows * size_t(head_dim_));
        s.outputs.resize(rows * size_t(head_dim_));
        if (head_dim_ % kActivationBlock == 0) {
            s.queries_q.resize(rows * size_t(head_dim_));
            s.queries_d.resize(rows * size_t(head_dim_ / kActivationBlock));
            s.queries_d_sum.resize(rows * size_t(head_dim_ / kActivationBlock));
            s.queries_half_sums.resize(rows * size_t(head_dim_ / 8));
        }
    }
}

namespace {

// At least `needed` elements, doubling so a conversation growing a token at a time reallocates rarely.
void grow(std::vector<float>& v, size_t needed) {
    if (v.size() < needed) v.resize(std::max(needed, 2 * v.size()));
}

float element(const KvStorage& kv, const void* rows, int i) {
    return kv.dtype == DType::F16 ? f16_to_f32(static_cast<const uint16_t*>(rows)[i])
                                  : static_cast<const float*>(rows)[i];
}

// dst (head_dim, n_ctx) = the kv head's keys or values of positions 0 .. n_ctx - 1, transposed, in f32.
void gather_transposed(const KvStorage& kv, BlockTableView table, int layer, int k_or_v, int kv_head, int head_dim,
                       int n_ctx, float* dst) {
    const int block_size = kv.layout.block_size;
    for (int pos = 0; pos < n_ctx; pos += block_size) {
        const KvSlot slot = kv_slot(table.blocks, block_size, pos);
        const void* rows = kv.row(slot.block, layer, k_or_v, kv_head, 0);
        const int n = std::min(block_size, n_ctx - pos);
        for (int j = 0; j < n; ++j)
            for (int d = 0; d < head_dim; ++d) dst[int64_t(d) * n_ctx + pos + j] = element(kv, rows, j * head_dim + d);
    }
}

// The first lines of the keys or values of the block holding position pos (nothing past n_ctx),
// asked for into the caches: a head's rows in one block are a few KiB, and blocks lie anywhere in
// the pool, so the hardware's prefetchers, which follow a run of lines within a page, start cold at
// every block. Once started they fetch the rest of the run; asking for every line cost more load
// slots than it saved (llamadesk-attention-bench, 8B shape at 4096), and asking for a whole block
// into L2, 1 to 8 blocks ahead, read 32.6 to 35.6 ms, these 34.8 to 35.2: nothing beyond the noise.
constexpr int kPrefetchBlocks = 2;
constexpr int64_t kPrefetchBytes = 1024;
void prefetch_block(const KvStorage& kv, BlockTableView table, int layer, int k_or_v, int kv_head, int pos, int n_ctx) {
    if (pos >= n_ctx) return;
    const int block_size = kv.layout.block_size;
    const auto* rows = static_cast<const char*>(kv.row(kv_slot(table.blocks, block_size, pos).block, layer, k_or_v, kv_head, 0));
    const int64_t bytes = std::min(kPrefetchBytes, int64_t(std::min(block_size, n_ctx - pos)) * kv.row_bytes());
    for (int64_t at = 0; at < bytes; at += 64) prefetch_to_l1(rows + at);
}

}  // namespace

void Attention::run(ThreadPool& pool, const Kernels& kernels, int layer, const float* q, int n,
                    int start_pos, const KvStorage& kv, BlockTableView table, float* out) {
    const int n_rep = n_heads_ / n_kv_heads_;
    const int dim = n_heads_ * head_dim_;
    const int block_size = kv.layout.block_size;
    const float scale = 1.0f / std::sqrt(float(head_dim_));
    const int n_chunks = (n + kQueryChunk - 1) / kQueryChunk;
    const TypeKernels& f32 = kernels.types[int(DType::F32)];
    const TypeKernels& cached = kernels.types[int(kv.dtype)];  // keys and values as stored
    const bool narrow = head_dim_ < kNarrowHead;

    // Parts of the positions, whole blocks each (narrow heads transpose a head's whole context, so
    // they take one part).
    const int heads_items = n_chunks * n_kv_heads_;
    const int blocks = (start_pos + n + block_size - 1) / block_size;
    const int wanted = (kItemsPerThread * pool.size() + heads_items - 1) / heads_items;
    const int parts_asked = narrow ? 1 : std::max(1, std::min(wanted, blocks / kMinPartBlocks));
    const int part_positions = (blocks + parts_asked - 1) / parts_asked * block_size;
    const int parts = (blocks * block_size + part_positions - 1) / part_positions;
    if (parts > 1 && partials_.size() < size_t(heads_items) * size_t(parts) * part_floats())
        partials_.resize(size_t(heads_items) * size_t(parts) * part_floats());

    // Later chunks attend to more positions: hand them out first so the work evens out.
    pool.parallel_for(int64_t(heads_items) * parts, [&](int64_t item, int thread) {
        Scratch& s = scratch_[size_t(thread)];
        const int chunk = n_chunks - 1 - int(item / (int64_t(n_kv_heads_) * parts));
        const int kv_head = int(item / parts % n_kv_heads_);
        const int part = int(item % parts);
        const int t0 = chunk * kQueryChunk, t1 = std::min(n, t0 + kQueryChunk);
        const int n_rows = (t1 - t0) * n_rep;  // rows (token, query head of this kv head)
        // positions p0 .. p1 - 1: this part's of those the chunk's last token sees
        const int p0 = part * part_positions, p1 = std::min(start_pos + t1, p0 + part_positions);
        float* const part_out = parts > 1 ? partial(chunk, kv_head, part, parts) : nullptr;
        if (p0 >= p1) {  // past this chunk's positions (so parts > 1): a part that adds nothing
            for (int r = 0; r < n_rows; ++r) scale_of(part_out, r)[1] = 0.0f;
            return;
        }
        const int n_ctx = p1 - p0, ld_scores = n_ctx;
        grow(s.scores, size_t(n_rows) * size_t(n_ctx));  // each thread grows only its own scratch

        // queries (n_rows, head_dim): the n_rep heads of a token are adjacent in q
        for (int t = t0; t < t1; ++t)
            for (int r = 0; r < n_rep; ++r) {
                const float* src = q + int64_t(t) * dim + (kv_head * n_rep + r) * head_dim_;
                float* dst = s.queries.data() + int64_t((t - t0) * n_rep + r) * head_dim_;
                for (int d = 0; d < head_dim_; ++d) dst[d] = src[d] * scale;
            }

        if (narrow) {
            grow(s.keys_t, size_t(head_dim_) * size_t(n_ctx));
            grow(s.values_t, size_t(head_dim_) * size_t(n_ctx));
        }
        if (narrow) {  // scores = queries (n_rows, head_dim) . keys_t (head_dim, n_ctx)
            gather_transposed(kv, table, layer, 0, kv_head, head_dim_, n_ctx, s.keys_t.data());
            for (int r = 0; r < n_rows; ++r) std::fill_n(s.scores.data() + int64_t(r) * ld_scores, n_ctx, 0.0f);
            f32.weighted_rows(s.queries.data(), head_dim_, n_rows, s.keys_t.data(), n_ctx, head_dim_, n_ctx,
                              s.scores.data(), ld_scores);
        }
        // scores (n_rows, n_ctx) = queries . keys^T, one block of keys at a time; q8_0 keys take the
        // queries quantized, as any block type takes its activations
        const bool quantized_keys = cached.quantized_gemm != nullptr;
        if (quantized_keys)
            kernels.quantize_rows(s.queries.data(), head_dim_, n_rows, head_dim_, s.queries_q.data(), s.queries_d.data(),
                                  s.queries_d_sum.data(), s.queries_half_sums.data());
        const QuantizedRows queries_q{s.queries_q.data(), s.queries_d.data(), s.queries_d_sum.data(),
                                      s.queries_half_sums.data(), head_dim_};
        for (int pos = p0; pos < p1 && !narrow; pos += block_size) {
            const KvSlot slot = kv_slot(table.blocks, block_size, pos);
            const void* keys = kv.row(slot.block, layer, 0, kv_head, 0);  // (block_size, head_dim)
            const int n_keys = std::min(block_size, p1 - pos);
            prefetch_block(kv, table, layer, 0, kv_head, pos + kPrefetchBlocks * block_size, p1);
            if (quantized_keys)
                cached.quantized_gemm(queries_q, n_rows, keys, kv.row_bytes(), n_keys, head_dim_,
                                      s.scores.data() + (pos - p0), ld_scores);
            else
                cached.gemm(s.queries.data(), head_dim_, n_rows, keys, head_dim_, n_keys, head_dim_,
                            s.scores.data() + (pos - p0), ld_scores);
        }

        // each row: softmax over its causal prefix within the part; later positions (seen only by
        // later tokens of the chunk) get probability 0, so all rows can share one pass over the values
        for (int t = t0; t < t1; ++t) {
            const int n_seen = std::clamp(start_pos + t + 1 - p0, 0, n_ctx);
            for (int r = 0; r < n_rep; ++r) {
                const int row = (t - t0) * n_rep + r;
                float* scores = s.scores.data() + int64_t(row) * ld_scores;
                const SoftmaxScale seen = n_seen > 0 ? kernels.softmax(scores, n_seen) : SoftmaxScale{0.0f, 0.0f};
                std::fill(scores + n_seen, scores + n_ctx, 0.0f);
                if (part_out) scale_of(part_out, row)[0] = seen.max, scale_of(part_out, row)[1] = seen.sum;
            }
        }

        float* const outputs = part_out ? part_out : s.outputs.data();
        if (narrow) {  // outputs = probabilities (n_rows, n_ctx) . values_t (head_dim, n_ctx)^T
            gather_transposed(kv, table, layer, 1, kv_head, head_dim_, n_ctx, s.values_t.data());
            f32.gemm(s.scores.data(), ld_scores, n_rows, s.values_t.data(), n_ctx, head_dim_, n_ctx, outputs, head_dim_);
        } else {
            std::fill(outputs, outputs + int64_t(n_rows) * head_dim_, 0.0f);
        }
        // outputs (n_rows, head_dim) = probabilities . values, one block of values at a time
        for (int pos = p0; pos < p1 && !narrow; pos += block_size) {
            const KvSlot slot = kv_slot(table.blocks, block_size, pos);
            const void* values = kv.row(slot.block, layer, 1, kv_head, 0);  // (block_size, head_dim)
            prefetch_block(kv, table, layer, 1, kv_head, pos + kPrefetchBlocks * block_size, p1);
            cached.weighted_rows(s.scores.data() + (pos - p0), ld_scores, n_rows, values, head_dim_,
                                 std::min(block_size, p1 - pos), head_dim_, outputs, head_dim_);
        }
        if (part_out) return;  // merged below
        for (int t = t0; t < t1; ++t)
            for (int r = 0; r < n_rep; ++r)
                std::copy_n(outputs + int64_t((t - t0) * n_rep + r) * head_dim_, head_dim_,
                            out + int64_t(t) * dim + (kv_head * n_rep + r) * head_dim_);
    });
    if (parts > 1) merge_parts(n, parts, out);
}

// out's rows from the parts' outputs: each part's output is normalized by its own sum of
// exp(score - its max), so part p weighs sum_p * exp(max_p - max) against the others.
void Attention::merge_parts(int n, int parts, float* out) {
    const int n_rep = n_heads_ / n_kv_heads_, dim = n_heads_ * head_dim_;
    for (int t = 0; t < n; ++t)
        for (int kv_head = 0; kv_head < n_kv_heads_; ++kv_head)
            for (int r = 0; r < n_rep; ++r) {
                const int chunk = t / kQueryChunk, row = t % kQueryChunk * n_rep + r;
                float max = -INFINITY;
                for (int p = 0; p < parts; ++p) {
                    const float* seen = scale_of(partial(chunk, kv_head, p, parts), row);
                    if (seen[1] > 0.0f) max = std::max(max, seen[0]);
                }
                float* y = out + int64_t(t) * dim + (kv_head * n_rep + r) * head_dim_;
                std::fill_n(y, head_dim_, 0.0f);
                float total = 0.0f;
                for (int p = 0; p < parts; ++p) {
                    float* const part_out = partial(chunk, kv_head, p, parts);
                    const float* seen = scale_of(part_out, row);
                    if (seen[1] <= 0.0f) continue;  // no position of this part is seen
                    const float w = seen[1] * std::exp(seen[0] - max);
                    const float* o = part_out + size_t(row) * size_t(head_dim_);
                    for (int d = 0; d < head_dim_; ++d) y[d] += w * o[d];
                    total += w;
                }
                for (int d = 0; d < head_dim_; ++d) y[d] /= total;
            }
}

}  // namespace llamadesk::cpu
