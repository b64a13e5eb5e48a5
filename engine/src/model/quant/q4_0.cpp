// Q4_0: blocks of 32 four-bit values centred on 8, one f16 scale (4.5 bits per weight). The scale
// maps the value of largest magnitude to -8, so the full range -8..7 is used.
#include "model/quant/block_math.h"
#include "model/quant/blocks.h"
#include "model/quant/quant.h"

namespace llamadesk::quant {

void to_f32_q4_0(const void* src, float* dst, int64_t n) {
    const auto* b = static_cast<const BlockQ4_0*>(src);
    for (int64_t i = 0; i < n / kBlock32; ++i, dst += kBlock32) {
        const float d = f16_to_f32(b[i].d);
        for (int j = 0; j < 16; ++j) {
            dst[j] = d * float((b[i].qs[j] & 15) - 8);
            dst[j + 16] = d * float((b[i].qs[j] >> 4) - 8);
        }
    }
}

void from_f32_q4_0(const float* src, void* dst, int64_t n) {
    auto* b = static_cast<BlockQ4_0*>(dst);
    for (int64_t i = 0; i < n / kBlock32; ++i, src += kBlock32) {
        float d;
        b[i].d = store_scale(signed_absmax(src, kBlock32) / -8.0f, d);
        const float inv = inverse(d);
        for (int j = 0; j < 16; ++j)
            b[i].qs[j] = uint8_t(quantize_clamped(src[j], inv, -8, 7) + 8) |
                         uint8_t((quantize_clamped(src[j + 16], inv, -8, 7) + 8) << 4);
    }
}

}  // namespace llamadesk::quant
