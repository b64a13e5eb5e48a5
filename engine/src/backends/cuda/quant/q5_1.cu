// Q5_1 on the device: Q4_1's nibbles with bit j of qh as element j's fifth bit, offset m.
#include <cstddef>

#include "backends/cuda/quant/quant_kernels.cuh"

namespace llamadesk::cuda {

namespace {

using quant::BlockQ5_1;

struct Q5_1 {
    static constexpr int kBlockElements = quant::kBlock32, kBlockBytes = sizeof(BlockQ5_1), kGroup = 32;
    static constexpr bool kHasOffset = true;
    __device__ static void group(const uint8_t* b, int, float (&q)[kGroup], float& scale, float& offset) {
        using quant_kernels::pair_at, quant_kernels::small_int;
        scale = quant_kernels::f16_at(b + offsetof(BlockQ5_1, d));
        offset = quant_kernels::f16_at(b + offsetof(BlockQ5_1, m));
        const uint8_t* qh_bytes = b + offsetof(BlockQ5_1, qh);
        const uint32_t qh = pair_at(qh_bytes, 0) | pair_at(qh_bytes, 1) << 16;
        const uint8_t* qs = b + offsetof(BlockQ5_1, qs);
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            const uint32_t p = pair_at(qs, i);
            const int j = 2 * i;
            q[j] = small_int((p & 15) | ((qh >> j) & 1) << 4, 0.0f);
            q[j + 16] = small_int(((p >> 4) & 15) | ((qh >> (j + 16)) & 1) << 4, 0.0f);
            q[j + 1] = small_int(((p >> 8) & 15) | ((qh >> (j + 1)) & 1) << 4, 0.0f);
            q[j + 17] = small_int(((p >> 12) & 15) | ((qh >> (j + 17)) & 1) << 4, 0.0f);
        }
    }
};

}  // namespace

LLAMADESK_CUDA_DEFINE_BLOCK_TYPE(q5_1, Q5_1)

}  // namespace llamadesk::cuda
