// Entry points of our CUDA kernels, one .cu file each. Each checks its arguments, picks the
// template instance for the element types (and head size) and launches on `stream`.
// Pointers are device pointers. Element types: "dtype" buffers hold F32, F16 or BF16 as told;
// float* buffers are always F32. Activations that feed a matrix product are in the model's
// activation dtype (device_model.h) so cuBLAS can take them; the residual stream and matrix
// outputs stay F32. Matrices in block types have their own kernels (weight_kernels.h).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "cache/kv_layout.h"
#include "sampling/sampling_params.h"
#include "model/dtype.h"
#include "model/rope.h"

namespace llamadesk::cuda {

// x (n, dim) = table[tokens[i]] widened to F32. table: (vocab, dim) in dtype.
void embedding_lookup(const int32_t* tokens, int n, const void* table, DType dtype, int vocab,
                      int dim, float* x, cudaStream_t stream);

// out (n, dim) in out_dtype = x / rms(x) * weight, rms(x) = sqrt(mean(x^2) + eps).
void rmsnorm(const float* x, const float* weight, int n, int dim, float eps, void* out,
             DType out_dtype, cudaStream_t stream);

// y (rows) = W (rows, cols) @ x (cols), or y += that when accumulate. W and x in dtype.
void gemv(const void* w, const void* x, DType dtype, int rows, int cols, float* y, bool accumulate,
          cudaStream_t stream);

// What attention and RoPE need to find the current tokens and their cache slots.
struct AttentionShape {
    int n_tokens = 0;         // tokens in this forward call
    int n_heads = 0;
    int n_kv_heads = 0;
    int head_dim = 0;
    int layer = 0;
    KvLayout layout;
    const int32_t* start_pos = nullptr;    // device int: position of the first token
    const int32_t* block_table = nullptr;  // device (n_blocks,): covers start_pos + n_tokens
};

// qkv (n_tokens, (n_heads + 2 n_kv_heads) * head_dim) F32, q | k | v per token. Rotates q in
// place and writes rotated k and v into the cache slots of positions start_pos + i.
void rope_write_kv(float* qkv, const AttentionShape& s, const RopeParams& rope, void* kv_pool,
                   DType kv_dtype, cudaStream_t stream);

// out (n_tokens, n_heads * head_dim) in out_dtype = causal softmax(q k^T / sqrt(hd)) v, token i
// attending to positions 0 .. start_pos + i through the block table. Each (token, head) is
// split into n_splits ranges of positions (flash-decoding) whose partial results, in
// partials (n_tokens, n_heads, n_splits, head_dim + 2), are merged by a second kernel.
void attention(const float* qkv, const AttentionShape& s, const void* kv_pool, DType kv_dtype,
               int n_splits, float* partials, void* out, DType out_dtype, cudaStream_t stream);
// Sizes attention() supports (the dispatch lists them; others are refused with a message).
bool attention_supports_head_dim(int head_dim);

// out (n, hidden) in dtype = silu(gate) * up, gate_up (n, 2 * hidden) F32 as gate | up.
void swiglu(const float* gate_up, int n, int hidden, void* out, DType dtype, cudaStream_t stream);

// dst (n) in dtype = src (n) F32, rounded to nearest.
void convert_from_f32(const float* src, int64_t n, void* dst, DType dtype, cudaStream_t stream);
// dst (n) in dtype: uniform in [-scale, scale) from a counter-based hash of (seed, index).
void fill_random(void* dst, int64_t n, DType dtype, float scale, uint64_t seed, cudaStream_t stream);
// dst (n) F32 = value.
void fill_f32(float* dst, int64_t n, float value, cudaStream_t stream);

// Sampling settings as the device reads them (from device memory, so a captured graph replays
// with whatever the host wrote there before the launch).
struct DeviceSampling {
    float temperature = 0.0f;  // <= 0: greedy
    int32_t top_k = 0;         // <= 0: off
    float top_p = 1.0f;        // >= 1: off
    float min_p = 0.0f;        // <= 0: off
    float repeat_penalty = 1.0f;
    int32_t n_recent = 0;      // entries of `recent` the penalty applies to
    double uniform = 0.0;      // in [0, 1), drawn by the host sampler's RNG
};

inline DeviceSampling device_sampling(const SamplingParams& p, int32_t n_recent, double uniform) {
    return {p.temperature, p.top_k, p.top_p, p.min_p, p.repeat_penalty, n_recent, uniform};
}

// Chooses one token from logits (vocab) F32, which it modifies (penalty, temperature), and
// writes its id to *token. One block; the vocabulary is read a few dozen times.
void sample_token(float* logits, int vocab, const DeviceSampling* params, const int32_t* recent,
                  int32_t* token, cudaStream_t stream);

}  // namespace llamadesk::cuda
