// Q4_K on the device: a group is a sub-block of 32 (the low nibbles of qs[32c..32c+31] for
// sub-block 2c, their high nibbles for 2c + 1) with its 6-bit scale and min.
#include <cstddef>

#include "backends/cuda/quant/quant_kernels.cuh"

namespace llamadesk::cuda {

namespace {

using quant::BlockQ4_K;

struct Q4_K {
    static constexpr int kBlockElements = quant::kBlock256, kBlockBytes = sizeof(BlockQ4_K), kGroup = 32;
    static constexpr bool kHasOffset = true;
    __device__ static void group(const uint8_t* b, int g, float (&q)[kGroup], float& scale, float& offset) {
        uint8_t sc, m;
        quant::unpack_k_scale(b + offsetof(BlockQ4_K, scales), g, sc, m);
        scale = quant_kernels::f16_at(b + offsetof(BlockQ4_K, d)) * float(sc);
        offset = -quant_kernels::f16_at(b + offsetof(BlockQ4_K, dmin)) * float(m);
        const uint8_t* qs = b + offsetof(BlockQ4_K, qs) + 32 * (g / 2);
        const int shift = 4 * (g % 2);
#pragma unroll
        for (int i = 0; i < 16; ++i) {
            const uint32_t p = quant_kernels::pair_at(qs, i);
            q[2 * i] = quant_kernels::small_int((p >> shift) & 15, 0.0f);
            q[2 * i + 1] = quant_kernels::small_int((p >> (8 + shift)) & 15, 0.0f);
        }
    }
};

}  // namespace

LLAMADESK_CUDA_DEFINE_BLOCK_TYPE(q4_k, Q4_K)

}  // namespace llamadesk::cuda
