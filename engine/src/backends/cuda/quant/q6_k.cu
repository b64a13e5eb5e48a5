// Q6_K on the device: a group is a sub-block of 16 with its int8 scale. Sub-block g lies in half
// h = g / 8 and quarter k = g % 8 / 2 of it: its low four bits are the low (k < 2) or high nibbles
// of ql[64h + 32(k % 2) + l], its high two bits bits 2k, 2k + 1 of qh[32h + l], l from 16 (g % 2).
#include <cstddef>

#include "backends/cuda/quant/quant_kernels.cuh"

namespace llamadesk::cuda {

namespace {

using quant::BlockQ6_K;

struct Q6_K {
    static constexpr int kBlockElements = quant::kBlock256, kBlockBytes = sizeof(BlockQ6_K), kGroup = 16;
    static constexpr bool kHasOffset = false;
    __device__ static void group(const uint8_t* b, int g, float (&q)[kGroup], float& scale, float& offset) {
        using quant_kernels::pair_at, quant_kernels::small_int;
        const int h = g / 8, k = g % 8 / 2, l0 = 16 * (g % 2);
        scale = quant_kernels::f16_at(b + offsetof(BlockQ6_K, d)) *
                float(int8_t(b[offsetof(BlockQ6_K, scales) + g]));
        offset = 0.0f;
        const uint8_t* lo = b + offsetof(BlockQ6_K, ql) + 64 * h + 32 * (k % 2) + l0;
        const uint8_t* hi = b + offsetof(BlockQ6_K, qh) + 32 * h + l0;
        const int lo_shift = 4 * (k / 2), hi_shift = 2 * k;
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            const uint32_t pl = pair_at(lo, i), ph = pair_at(hi, i);
            q[2 * i] = small_int(((pl >> lo_shift) & 15) | ((ph >> hi_shift) & 3) << 4, 32.0f);
            q[2 * i + 1] = small_int(((pl >> (8 + lo_shift)) & 15) | ((ph >> (8 + hi_shift)) & 3) << 4, 32.0f);
        }
    }
};

}  // namespace

LLAMADESK_CUDA_DEFINE_BLOCK_TYPE(q6_k, Q6_K)

}  // namespace llamadesk::cuda
