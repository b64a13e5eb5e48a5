// Q5_0: Q4_0 with a fifth bit per value, centred on 16 (5.5 bits per weight).
#include <cstring>

#include "model/quant/block_math.h"
#include "model/quant/blocks.h"
#include "model/quant/quant.h"

namespace llamadesk::quant {

void to_f32_q5_0(const void* src, float* dst, int64_t n) {
    const auto* b = static_cast<const BlockQ5_0*>(src);
    for (int64_t i = 0; i < n / kBlock32; ++i, dst += kBlock32) {
        const float d = f16_to_f32(b[i].d);
        uint32_t qh;
        std::memcpy(&qh, b[i].qh, 4);
        for (int j = 0; j < 16; ++j) {
            const int lo = (b[i].qs[j] & 15) | int((qh >> j) & 1) << 4;
            const int hi = (b[i].qs[j] >> 4) | int((qh >> (j + 16)) & 1) << 4;
            dst[j] = d * float(lo - 16);
            dst[j + 16] = d * float(hi - 16);
        }
    }
}

void from_f32_q5_0(const float* src, void* dst, int64_t n) {
    auto* b = static_cast<BlockQ5_0*>(dst);
    for (int64_t i = 0; i < n / kBlock32; ++i, src += kBlock32) {
        float d;
        b[i].d = store_scale(signed_absmax(src, kBlock32) / -16.0f, d);
        const float inv = inverse(d);
        uint32_t qh = 0;
        for (int j = 0; j < 16; ++j) {
            const int lo = quantize_clamped(src[j], inv, -16, 15) + 16;
            const int hi = quantize_clamped(src[j + 16], inv, -16, 15) + 16;
            b[i].qs[j] = uint8_t((lo & 15) | (hi & 15) << 4);
            qh |= uint32_t(lo >> 4) << j | uint32_t(hi >> 4) << (j + 16);
        }
        std::memcpy(b[i].qh, &qh, 4);
    }
}

}  // namespace llamadesk::quant
