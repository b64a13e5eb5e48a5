// Q4_1: blocks of 32 four-bit values between the block's min and max, f16 scale and min (5 bits
// per weight).
#include <algorithm>

#include "model/quant/block_math.h"
#include "model/quant/blocks.h"
#include "model/quant/quant.h"

namespace llamadesk::quant {

void to_f32_q4_1(const void* src, float* dst, int64_t n) {
    const auto* b = static_cast<const BlockQ4_1*>(src);
    for (int64_t i = 0; i < n / kBlock32; ++i, dst += kBlock32) {
        const float d = f16_to_f32(b[i].d), m = f16_to_f32(b[i].m);
        for (int j = 0; j < 16; ++j) {
            dst[j] = d * float(b[i].qs[j] & 15) + m;
            dst[j + 16] = d * float(b[i].qs[j] >> 4) + m;
        }
    }
}

void from_f32_q4_1(const float* src, void* dst, int64_t n) {
    auto* b = static_cast<BlockQ4_1*>(dst);
    for (int64_t i = 0; i < n / kBlock32; ++i, src += kBlock32) {
        const auto [lo, hi] = std::minmax_element(src, src + kBlock32);
        float d, m;
        b[i].d = store_scale((*hi - *lo) / 15.0f, d);
        b[i].m = store_scale(*lo, m);
        const float inv = inverse(d);
        for (int j = 0; j < 16; ++j)
            b[i].qs[j] = uint8_t(quantize_clamped(src[j] - m, inv, 0, 15)) |
                         uint8_t(quantize_clamped(src[j + 16] - m, inv, 0, 15) << 4);
    }
}

}  // namespace llamadesk::quant
