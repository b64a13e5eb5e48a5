// Q5_K on the device: Q4_K's groups, with bit g of qh[l] as the fifth bit of element l of
// sub-block g.
#include <cstddef>

#include "backends/cuda/quant/quant_kernels.cuh"

namespace llamadesk::cuda {

namespace {

using quant::BlockQ5_K;

struct Q5_K {
    static constexpr int kBlockElements = quant::kBlock256, kBlockBytes = sizeof(BlockQ5_K), kGroup = 32;
    static constexpr bool kHasOffset = true;
    __device__ static void group(const uint8_t* b, int g, float (&q)[kGroup], float& scale, float& offset) {
        using quant_kernels::pair_at, quant_kernels::small_int;
        uint8_t sc, m;
        quant::unpack_k_scale(b + offsetof(BlockQ5_K, scales), g, sc, m);
        scale = quant_kernels::f16_at(b + offsetof(BlockQ5_K, d)) * float(sc);
        offset = -quant_kernels::f16_at(b + offsetof(BlockQ5_K, dmin)) * float(m);
        const uint8_t* qs = b + offsetof(BlockQ5_K, qs) + 32 * (g / 2);
        const uint8_t* qh = b + offsetof(BlockQ5_K, qh);
        const int shift = 4 * (g % 2);
#pragma unroll
        for (int i = 0; i < 16; ++i) {
            const uint32_t p = pair_at(qs, i), h = pair_at(qh, i);
            q[2 * i] = small_int(((p >> shift) & 15) | ((h >> g) & 1) << 4, 0.0f);
            q[2 * i + 1] = small_int(((p >> (8 + shift)) & 15) | ((h >> (8 + g)) & 1) << 4, 0.0f);
        }
    }
};

}  // namespace

LLAMADESK_CUDA_DEFINE_BLOCK_TYPE(q5_k, Q5_K)

}  // namespace llamadesk::cuda
