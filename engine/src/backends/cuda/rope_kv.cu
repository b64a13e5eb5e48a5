// Rotary embeddings (adjacent pairs, as llama2.c and GGUF's llama use them) fused with writing
// this step's keys and values into the paged cache: for each token, one thread per (q or k head,
// pair) rotates q in place or stores the rotated k pair, and one thread per v element stores it,
// at the token's slot found with kv_slot() and KvLayout::offset(). Blocks along y split a
// token's work so a single decode token still spreads over many multiprocessors.
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/device_math.cuh"
#include "backends/cuda/kernels.h"
#include "model/rope.h"

namespace llamadesk::cuda {

template <typename KvT>
static __global__ void rope_write_kv_kernel(float* __restrict__ qkv,  // (n_tokens, q_dim + 2 kv_dim)
                                            AttentionShape s, RopeParams rope,
                                            KvT* __restrict__ pool) {  // KvLayout blocks
    const int t = blockIdx.x;
    const int item = blockIdx.y * blockDim.x + threadIdx.x;
    const int hd = s.head_dim;
    const int q_dim = s.n_heads * hd, kv_dim = s.n_kv_heads * hd;
    const int pos = *s.start_pos + t;
    float* q = qkv + int64_t(t) * (q_dim + 2 * kv_dim);
    const float* k = q + q_dim;
    const float* v = k + kv_dim;
    const KvSlot slot = kv_slot(s.block_table, s.layout.block_size, pos);

    // items: pairs (2i, 2i+1) of every q and k head, then the v elements
    const int n_pairs = (s.n_heads + s.n_kv_heads) * hd / 2;
    if (item < n_pairs) {
        const int head = item / (hd / 2), i = 2 * (item % (hd / 2));
        // in double, as the CPU backend: at position 4000 a float angle is off by ~2e-4 rad
        double sin_d, cos_d;
        sincos(double(pos) * rope_frequency(i / 2, hd, rope), &sin_d, &cos_d);
        const float sin_a = float(sin_d), cos_a = float(cos_d);
        if (head < s.n_heads) {
            float* qh = q + head * hd;
            const float q0 = qh[i], q1 = qh[i + 1];
            qh[i] = q0 * cos_a - q1 * sin_a;
            qh[i + 1] = q0 * sin_a + q1 * cos_a;
        } else {
            const int kv_head = head - s.n_heads;
            const float k0 = k[kv_head * hd + i], k1 = k[kv_head * hd + i + 1];
            KvT* cache_k = pool + s.layout.offset(slot.block, s.layer, 0, kv_head, slot.in_block);
            cache_k[i] = from_float<KvT>(k0 * cos_a - k1 * sin_a);
            cache_k[i + 1] = from_float<KvT>(k0 * sin_a + k1 * cos_a);
        }
    } else if (item < n_pairs + kv_dim) {
        const int e = item - n_pairs;
        const int kv_head = e / hd, d = e % hd;
        KvT* cache_v = pool + s.layout.offset(slot.block, s.layer, 1, kv_head, slot.in_block);
        cache_v[d] = from_float<KvT>(v[e]);
    }
}

template <typename KvT>
static void launch_rope_write_kv(float* qkv, const AttentionShape& s, const RopeParams& rope, KvT* pool,
                                 cudaStream_t stream) {
    const int items = (s.n_heads + s.n_kv_heads) * s.head_dim / 2 + s.n_kv_heads * s.head_dim;
    const dim3 grid(s.n_tokens, ceil_div(items, 128));
    rope_write_kv_kernel<KvT><<<grid, 128, 0, stream>>>(qkv, s, rope, pool);
    CUDA_CHECK_LAUNCH();
}

void rope_write_kv(float* qkv, const AttentionShape& s, const RopeParams& rope, void* kv_pool,
                   DType kv_dtype, cudaStream_t stream) {
    if (s.n_tokens <= 0 || s.head_dim <= 0 || s.head_dim % 2 != 0 || s.n_kv_heads <= 0 ||
        s.n_heads % s.n_kv_heads != 0 || s.layout.head_dim != s.head_dim ||
        s.layout.n_kv_heads != s.n_kv_heads || s.layer < 0 || s.layer >= s.layout.n_layers)
        fail(ErrorCode::Internal, "rope_write_kv: shape does not match the KV layout");
    dispatch_kv_dtype(kv_dtype, [&]<typename KvT>() {
        launch_rope_write_kv<KvT>(qkv, s, rope, static_cast<KvT*>(kv_pool), stream);
    });
}

}  // namespace llamadesk::cuda
