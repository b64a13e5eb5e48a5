// Paged attention. Each block takes one (query head, token, split): its warps walk the split's
// positions through the block table, one position per warp at a time, lanes sharing the head
// dimension, with an online softmax (running max m, sum l, weighted values acc). The warps'
// results are merged in shared memory into one partial (acc, m, l) per split; a second kernel
// merges the splits (flash-decoding) and normalizes. Token i attends to 0 .. start_pos + i, so
// the same code is causal prefill (many tokens, one split) and decode (one token, many splits).
// Query head h reads kv head h / n_rep; nothing is copied.
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/device_math.cuh"
#include "backends/cuda/kernels.h"

namespace llamadesk::cuda {

constexpr int kAttentionWarps = 4;

template <int HD, typename KvT>
static __global__ void __launch_bounds__(kAttentionWarps * 32)
attention_split_kernel(const float* __restrict__ qkv,  // (n_tokens, q_dim + 2 kv_dim), q rotated
                       AttentionShape s,
                       const KvT* __restrict__ pool,   // KvLayout blocks
                       float* __restrict__ partials) { // (n_tokens, n_heads, n_splits, HD + 2)
    constexpr int kPerLane = (HD + 31) / 32;  // lane holds dims lane, lane + 32, ...
    const int head = blockIdx.x, t = blockIdx.y, split = blockIdx.z, n_splits = gridDim.z;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int kv_head = head / (s.n_heads / s.n_kv_heads);
    const int n_ctx = *s.start_pos + t + 1;
    const int chunk = (n_ctx + n_splits - 1) / n_splits;
    const int begin = split * chunk, end = min(begin + chunk, n_ctx);

    const float* q = qkv + int64_t(t) * (s.n_heads + 2 * s.n_kv_heads) * HD + head * HD;
    const float scale = 1.0f / sqrtf(float(HD));
    float qr[kPerLane], acc[kPerLane];
#pragma unroll
    for (int i = 0; i < kPerLane; ++i) {
        const int d = lane + 32 * i;
        qr[i] = d < HD ? q[d] * scale : 0.0f;
        acc[i] = 0.0f;
    }
    float m = -INFINITY, l = 0.0f;
    // unrolled so the loads of the next position are in flight while this one is reduced
#pragma unroll 2
    for (int j = begin + warp; j < end; j += kAttentionWarps) {
        const KvSlot slot = kv_slot(s.block_table, s.layout.block_size, j);
        const KvT* k = pool + s.layout.offset(slot.block, s.layer, 0, kv_head, slot.in_block);
        const KvT* v = pool + s.layout.offset(slot.block, s.layer, 1, kv_head, slot.in_block);
        float score = 0.0f;
#pragma unroll
        for (int i = 0; i < kPerLane; ++i) {
            const int d = lane + 32 * i;
            if (d < HD) score += qr[i] * to_float(k[d]);
        }
        score = warp_sum(score);
        const float m_new = fmaxf(m, score);
        const float correction = expf(m - m_new);  // 0 on the first position (m = -inf)
        const float p = expf(score - m_new);
        l = l * correction + p;
#pragma unroll
        for (int i = 0; i < kPerLane; ++i) {
            const int d = lane + 32 * i;
            acc[i] = acc[i] * correction + (d < HD ? p * to_float(v[d]) : 0.0f);
        }
        m = m_new;
    }

    // merge the warps' (m, l, acc)
    __shared__ float s_m[kAttentionWarps], s_l[kAttentionWarps], s_acc[kAttentionWarps][HD];
    if (lane == 0) {
        s_m[warp] = m;
        s_l[warp] = l;
    }
#pragma unroll
    for (int i = 0; i < kPerLane; ++i) {
        const int d = lane + 32 * i;
        if (d < HD) s_acc[warp][d] = acc[i];
    }
    __syncthreads();
    float m_all = -INFINITY;
    for (int w = 0; w < kAttentionWarps; ++w) m_all = fmaxf(m_all, s_m[w]);
    float* out = partials + ((int64_t(t) * s.n_heads + head) * n_splits + split) * (HD + 2);
    for (int d = threadIdx.x; d < HD + 2; d += blockDim.x) {
        float sum = 0.0f;
        for (int w = 0; w < kAttentionWarps; ++w) {
            if (s_m[w] == -INFINITY) continue;  // this warp saw no position
            const float weight = expf(s_m[w] - m_all);
            sum += weight * (d < HD ? s_acc[w][d] : s_l[w]);
        }
        if (d < HD) out[d] = sum;
        else if (d == HD) out[HD] = m_all;
        else out[HD + 1] = sum;
    }
}

// out[t, head, :] = sum_s acc_s e^(m_s - M) / sum_s l_s e^(m_s - M)
template <typename OutT>
static __global__ void attention_combine_kernel(const float* __restrict__ partials,  // (n_tokens, n_heads, n_splits, hd + 2)
                                                int n_splits, int head_dim,
                                                OutT* __restrict__ out) {  // (n_tokens, n_heads * hd)
    const int head = blockIdx.x, t = blockIdx.y, n_heads = gridDim.x;
    const float* p = partials + (int64_t(t) * n_heads + head) * n_splits * (head_dim + 2);
    float m_all = -INFINITY;
    for (int sp = 0; sp < n_splits; ++sp) m_all = fmaxf(m_all, p[sp * (head_dim + 2) + head_dim]);
    float l_all = 0.0f;
    for (int sp = 0; sp < n_splits; ++sp) {
        const float m = p[sp * (head_dim + 2) + head_dim];
        if (m != -INFINITY) l_all += p[sp * (head_dim + 2) + head_dim + 1] * expf(m - m_all);
    }
    for (int d = threadIdx.x; d < head_dim; d += blockDim.x) {
        float sum = 0.0f;
        for (int sp = 0; sp < n_splits; ++sp) {
            const float m = p[sp * (head_dim + 2) + head_dim];
            if (m != -INFINITY) sum += p[sp * (head_dim + 2) + d] * expf(m - m_all);
        }
        out[(int64_t(t) * n_heads + head) * head_dim + d] = from_float<OutT>(sum / l_all);
    }
}

template <int HD, typename KvT, typename OutT>
static void launch_attention(const float* qkv, const AttentionShape& s, const KvT* pool,
                             int n_splits, float* partials, OutT* out, cudaStream_t stream) {
    const dim3 grid(s.n_heads, s.n_tokens, n_splits);
    attention_split_kernel<HD, KvT><<<grid, kAttentionWarps * 32, 0, stream>>>(qkv, s, pool, partials);
    CUDA_CHECK_LAUNCH();
    const int threads = HD < 32 ? 32 : (HD + 31) / 32 * 32;
    attention_combine_kernel<OutT><<<dim3(s.n_heads, s.n_tokens), threads, 0, stream>>>(
        partials, n_splits, HD, out);
    CUDA_CHECK_LAUNCH();
}

// The head sizes we build: every Llama-2 / TinyLlama / stories shape.
#define LLAMADESK_FOR_EACH_HEAD_DIM(X) X(8) X(16) X(32) X(48) X(64) X(80) X(96) X(128) X(256)

bool attention_supports_head_dim(int head_dim) {
    switch (head_dim) {
#define LLAMADESK_CASE(HD) case HD:
        LLAMADESK_FOR_EACH_HEAD_DIM(LLAMADESK_CASE) return true;
#undef LLAMADESK_CASE
    default: return false;
    }
}

void attention(const float* qkv, const AttentionShape& s, const void* kv_pool, DType kv_dtype,
               int n_splits, float* partials, void* out, DType out_dtype, cudaStream_t stream) {
    if (s.n_tokens <= 0 || n_splits <= 0 || s.n_kv_heads <= 0 || s.n_heads % s.n_kv_heads != 0 ||
        s.layout.head_dim != s.head_dim || s.layout.n_kv_heads != s.n_kv_heads)
        fail(ErrorCode::Internal, "attention: shape does not match the KV layout");
    dispatch_kv_dtype(kv_dtype, [&]<typename KvT>() {
        dispatch_dtype(out_dtype, [&]<typename OutT>() {
            const KvT* pool = static_cast<const KvT*>(kv_pool);
            OutT* o = static_cast<OutT*>(out);
            switch (s.head_dim) {
#define LLAMADESK_CASE(HD) \
    case HD: launch_attention<HD, KvT, OutT>(qkv, s, pool, n_splits, partials, o, stream); return;
                LLAMADESK_FOR_EACH_HEAD_DIM(LLAMADESK_CASE)
#undef LLAMADESK_CASE
            default:
                fail(ErrorCode::Unsupported,
                     "the CUDA attention kernel does not support head_dim " +
                         std::to_string(s.head_dim) + " (supported: 8, 16, 32, 48, 64, 80, 96, 128, 256)");
            }
        });
    });
}

}  // namespace llamadesk::cuda
