// Sampling on the device, so only the chosen token id crosses to the host. One block of 1024
// threads: repetition penalty, then greedy (argmax, the first of equal maxima, as on the host),
// or temperature with top-k, top-p and min-p. The host sampler sorts candidates; here each
// filter is a threshold on the scaled logit, found by bisection with a block-wide count or sum
// per step:
//   top-k: the largest t with count(l >= t) >= k (ties at the k-th value are all kept);
//   top-p: the largest t with mass(l >= t) >= top_p * mass(top-k set): the smallest prefix of
//          the sorted candidates that reaches top_p, as on the host;
//   min-p: l >= max + log(min_p).
// The kept set is their intersection, as on the host. The draw walks the kept tokens in id order
// (the host walks them by probability), so with the same seed both draw from the same
// distribution but not always the same token; greedy decoding is identical.
#include <cub/block/block_scan.cuh>

#include <climits>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/device_math.cuh"
#include "backends/cuda/kernels.h"

namespace llamadesk::cuda {

constexpr int kSampleThreads = 1024;
constexpr int kBisectionSteps = 24;

// Largest t in [lo, hi] with measure(t) >= target, for measure decreasing in t and
// measure(lo) >= target.
template <typename Measure>
__device__ float bisect(float lo, float hi, float target, Measure measure) {
    for (int step = 0; step < kBisectionSteps; ++step) {
        const float mid = lo + 0.5f * (hi - lo);
        if (measure(mid) >= target) lo = mid;
        else hi = mid;
    }
    return lo;
}

static __global__ void __launch_bounds__(kSampleThreads)
sample_kernel(float* __restrict__ logits,          // (vocab,), modified
              int vocab,
              const DeviceSampling* __restrict__ params,
              const int32_t* __restrict__ recent,  // (n_recent,)
              int32_t* __restrict__ token) {
    const DeviceSampling p = *params;
    const int tid = threadIdx.x;

    if (p.repeat_penalty != 1.0f) {
        for (int i = tid; i < p.n_recent; i += blockDim.x) {
            const int32_t t = recent[i];
            bool first = t >= 0 && t < vocab;  // each distinct token once
            for (int j = 0; j < i && first; ++j) first = recent[j] != t;
            if (first) logits[t] = logits[t] > 0.0f ? logits[t] / p.repeat_penalty
                                                    : logits[t] * p.repeat_penalty;
        }
        __syncthreads();
    }

    // argmax: the best value, then the smallest index holding it
    float best = -INFINITY;
    for (int i = tid; i < vocab; i += blockDim.x) best = fmaxf(best, logits[i]);
    best = block_max(best);
    float first_best = float(vocab);
    for (int i = tid; i < vocab; i += blockDim.x)
        if (logits[i] == best) { first_best = float(i); break; }
    const int best_id = int(-block_max(-first_best));
    if (p.temperature <= 0.0f) {
        if (tid == 0) *token = best_id < vocab ? best_id : 0;
        return;
    }

    for (int i = tid; i < vocab; i += blockDim.x) logits[i] = logits[i] / p.temperature;
    __syncthreads();
    const float top = best_id < vocab ? logits[best_id] : 0.0f;
    auto count_at_least = [&](float t) {
        float c = 0.0f;
        for (int i = tid; i < vocab; i += blockDim.x) c += logits[i] >= t ? 1.0f : 0.0f;
        return block_sum(c);
    };
    auto mass_at_least = [&](float t) {
        float s = 0.0f;
        for (int i = tid; i < vocab; i += blockDim.x) s += logits[i] >= t ? expf(logits[i] - top) : 0.0f;
        return block_sum(s);
    };

    float lowest = INFINITY;
    for (int i = tid; i < vocab; i += blockDim.x) lowest = fminf(lowest, logits[i]);
    lowest = -block_max(-lowest);

    float keep_from = lowest;
    if (p.top_k > 0 && p.top_k < vocab) keep_from = bisect(lowest, top, float(p.top_k), count_at_least);
    if (p.top_p < 1.0f) {
        const float total = mass_at_least(keep_from);
        keep_from = fmaxf(keep_from, bisect(keep_from, top, p.top_p * total, mass_at_least));
    }
    if (p.min_p > 0.0f) keep_from = fmaxf(keep_from, top + logf(fminf(p.min_p, 1.0f)));
    keep_from = fminf(keep_from, top);  // the best token always stays

    // draw: each thread owns a contiguous range of ids; an exclusive scan of their masses finds
    // the range holding u * kept mass
    const int per_thread = (vocab + kSampleThreads - 1) / kSampleThreads;
    const int begin = min(tid * per_thread, vocab), end = min(begin + per_thread, vocab);
    float local = 0.0f;
    for (int i = begin; i < end; ++i) local += logits[i] >= keep_from ? expf(logits[i] - top) : 0.0f;
    using Scan = cub::BlockScan<float, kSampleThreads>;
    __shared__ typename Scan::TempStorage scan_storage;
    __shared__ int chosen;
    __shared__ float kept;
    float before = 0.0f, all = 0.0f;
    Scan(scan_storage).ExclusiveSum(local, before, all);
    if (tid == 0) {
        chosen = INT_MAX;
        kept = all;
    }
    __syncthreads();
    const float r = float(p.uniform) * kept;
    if (local > 0.0f && r >= before && r < before + local) {
        float cumulative = before;
        int pick = -1;
        for (int i = begin; i < end; ++i) {
            if (logits[i] < keep_from) continue;
            pick = i;
            cumulative += expf(logits[i] - top);
            if (r < cumulative) break;
        }
        atomicMin(&chosen, pick);
    }
    __syncthreads();
    if (tid == 0) *token = chosen != INT_MAX ? chosen : best_id;  // rounding at the very end
}

static void launch_sample(float* logits, int vocab, const DeviceSampling* params,
                          const int32_t* recent, int32_t* token, cudaStream_t stream) {
    sample_kernel<<<1, kSampleThreads, 0, stream>>>(logits, vocab, params, recent, token);
    CUDA_CHECK_LAUNCH();
}

void sample_token(float* logits, int vocab, const DeviceSampling* params, const int32_t* recent,
                  int32_t* token, cudaStream_t stream) {
    if (vocab <= 0 || vocab > (1 << 24))  // ids travel through float reductions
        fail(ErrorCode::Unsupported, "device sampling supports vocabularies of 1 .. 2^24 tokens");
    launch_sample(logits, vocab, params, recent, token, stream);
}

}  // namespace llamadesk::cuda
