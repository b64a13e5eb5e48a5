// Q4_1 on the device: one group per block, low nibbles first, offset m.
#include <cstddef>

#include "backends/cuda/quant/quant_kernels.cuh"

namespace llamadesk::cuda {

namespace {

using quant::BlockQ4_1;

struct Q4_1 {
    static constexpr int kBlockElements = quant::kBlock32, kBlockBytes = sizeof(BlockQ4_1), kGroup = 32;
    static constexpr bool kHasOffset = true;
    __device__ static void group(const uint8_t* b, int, float (&q)[kGroup], float& scale, float& offset) {
        using quant_kernels::small_int;
        scale = quant_kernels::f16_at(b + offsetof(BlockQ4_1, d));
        offset = quant_kernels::f16_at(b + offsetof(BlockQ4_1, m));
        const uint8_t* qs = b + offsetof(BlockQ4_1, qs);
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            const uint32_t p = quant_kernels::pair_at(qs, i);
            q[2 * i] = small_int(p & 15, 0.0f);
            q[2 * i + 16] = small_int((p >> 4) & 15, 0.0f);
            q[2 * i + 1] = small_int((p >> 8) & 15, 0.0f);
            q[2 * i + 17] = small_int((p >> 12) & 15, 0.0f);
        }
    }
};

}  // namespace

LLAMADESK_CUDA_DEFINE_BLOCK_TYPE(q4_1, Q4_1)

}  // namespace llamadesk::cuda
