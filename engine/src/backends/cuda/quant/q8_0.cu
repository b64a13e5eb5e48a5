// Q8_0 on the device: one group per block, q the signed bytes.
#include <cstddef>

#include "backends/cuda/quant/quant_kernels.cuh"

namespace llamadesk::cuda {

namespace {

using quant::BlockQ8_0;

struct Q8_0 {
    static constexpr int kBlockElements = quant::kBlock32, kBlockBytes = sizeof(BlockQ8_0), kGroup = 32;
    static constexpr bool kHasOffset = false;
    __device__ static void group(const uint8_t* b, int, float (&q)[kGroup], float& scale, float& offset) {
        scale = quant_kernels::f16_at(b + offsetof(BlockQ8_0, d));
        offset = 0.0f;
        const uint8_t* qs = b + offsetof(BlockQ8_0, qs);
#pragma unroll
        for (int i = 0; i < 16; ++i) {
            const uint32_t p = quant_kernels::pair_at(qs, i);
            // flipping the sign bit makes the byte q + 128
            q[2 * i] = quant_kernels::small_int((p & 255) ^ 128, 128.0f);
            q[2 * i + 1] = quant_kernels::small_int((p >> 8) ^ 128, 128.0f);
        }
    }
};

}  // namespace

LLAMADESK_CUDA_DEFINE_BLOCK_TYPE(q8_0, Q8_0)

}  // namespace llamadesk::cuda
