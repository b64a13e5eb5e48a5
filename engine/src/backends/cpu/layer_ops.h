// The small per-token steps of a layer: embedding lookup, RMSNorm, rotary embeddings, residual add,
// and writing keys/values into the paged pool. Each is linear in the activations.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "model/rope.h"

#include "backends/cpu/kernels.h"
#include "backends/cpu/kv_storage.h"
#include "backends/cpu/thread_pool.h"
#include "cache/kv_layout.h"
#include "model/checkpoint.h"

namespace llamadesk::cpu {

// x (n, dim) = rows of the embedding table, widened to f32 (read back from the kernels' groups
// where the table is interleaved: a tied classifier)
void embed(const Kernels& kernels, const TensorView& token_embedding, std::span<const int32_t> tokens, float* x);

// out (n, dim) = x / sqrt(mean(x^2) + eps) * weight; out may equal x. Tokens run in parallel.
void rmsnorm(ThreadPool& pool, const Kernels& kernels, const float* x, const float* weight, int n, int dim,
             float eps, float* out);

// gate (n, hidden) = silu(gate) * up (SwiGLU). Tokens run in parallel.
void swiglu(ThreadPool& pool, const Kernels& kernels, float* gate, const float* up, int n, int hidden);

// x (n, dim) += y (n, dim)
void add_in_place(float* x, const float* y, int64_t count);

// Rotary position embeddings, adjacent-pair convention of llama2.c and GGUF: within each head the
// pair (2i, 2i+1) is rotated by pos * rope_theta^(-2i / head_dim).
// The cos/sin table covers the positions used so far, not the whole context: a file may claim a
// context of 2^21 positions, and its table would then cost gigabytes before a token is read.
class Rope {
public:
    Rope(int head_dim, const RopeParams& params);
    // Extends the table to positions 0 .. n_positions - 1 (not thread-safe; call before apply).
    void cover(int n_positions);
    // x (n, n_heads * head_dim) for tokens at positions start_pos .. start_pos + n - 1, all covered
    void apply(float* x, int n, int n_heads, int start_pos) const;

private:
    int head_dim_;
    RopeParams params_;
    std::vector<float> cos_, sin_;  // (positions covered, head_dim / 2)
};

// Writes k and v (n, n_kv_heads * head_dim) of one layer into the pool slots of positions
// start_pos .. start_pos + n - 1, in the pool's element type.
void store_kv(const Kernels& kernels, const KvStorage& kv, int layer, const float* k, const float* v, int n,
              int start_pos, BlockTableView table);

}  // namespace llamadesk::cpu
