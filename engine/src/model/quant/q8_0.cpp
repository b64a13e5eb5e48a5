// Q8_0: blocks of 32 signed bytes and one f16 scale (8.5 bits per weight).
#include <cmath>

#include "model/quant/block_math.h"
#include "model/quant/blocks.h"
#include "model/quant/quant.h"

namespace llamadesk::quant {

void to_f32_q8_0(const void* src, float* dst, int64_t n) {
    const auto* b = static_cast<const BlockQ8_0*>(src);
    for (int64_t i = 0; i < n / kBlock32; ++i, dst += kBlock32) {
        const float d = f16_to_f32(b[i].d);
        for (int j = 0; j < kBlock32; ++j) dst[j] = d * float(b[i].qs[j]);
    }
}

void from_f32_q8_0(const float* src, void* dst, int64_t n) {
    auto* b = static_cast<BlockQ8_0*>(dst);
    for (int64_t i = 0; i < n / kBlock32; ++i, src += kBlock32) {
        float d;
        b[i].d = store_scale(std::fabs(signed_absmax(src, kBlock32)) / 127.0f, d);
        const float inv = inverse(d);
        for (int j = 0; j < kBlock32; ++j) b[i].qs[j] = int8_t(quantize_clamped(src[j], inv, -127, 127));
    }
}

}  // namespace llamadesk::quant
