// Q4_0 on the device: one group per block, low nibbles first, centred on 8.
#include <cstddef>

#include "backends/cuda/quant/quant_kernels.cuh"

namespace llamadesk::cuda {

namespace {

using quant::BlockQ4_0;

struct Q4_0 {
    static constexpr int kBlockElements = quant::kBlock32, kBlockBytes = sizeof(BlockQ4_0), kGroup = 32;
    static constexpr bool kHasOffset = false;
    __device__ static void group(const uint8_t* b, int, float (&q)[kGroup], float& scale, float& offset) {
        using quant_kernels::small_int;
        scale = quant_kernels::f16_at(b + offsetof(BlockQ4_0, d));
        offset = 0.0f;
        const uint8_t* qs = b + offsetof(BlockQ4_0, qs);
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            const uint32_t p = quant_kernels::pair_at(qs, i);
            q[2 * i] = small_int(p & 15, 8.0f);
            q[2 * i + 16] = small_int((p >> 4) & 15, 8.0f);
            q[2 * i + 1] = small_int((p >> 8) & 15, 8.0f);
            q[2 * i + 17] = small_int((p >> 12) & 15, 8.0f);
        }
    }
};

}  // namespace

LLAMADESK_CUDA_DEFINE_BLOCK_TYPE(q4_0, Q4_0)

}  // namespace llamadesk::cuda
