// Q5_1: Q4_1 with a fifth bit per value (6 bits per weight).
#include <algorithm>
#include <cstring>

#include "model/quant/block_math.h"
#include "model/quant/blocks.h"
#include "model/quant/quant.h"

namespace llamadesk::quant {

void to_f32_q5_1(const void* src, float* dst, int64_t n) {
    const auto* b = static_cast<const BlockQ5_1*>(src);
    for (int64_t i = 0; i < n / kBlock32; ++i, dst += kBlock32) {
        const float d = f16_to_f32(b[i].d), m = f16_to_f32(b[i].m);
        uint32_t qh;
        std::memcpy(&qh, b[i].qh, 4);
        for (int j = 0; j < 16; ++j) {
            dst[j] = d * float((b[i].qs[j] & 15) | int((qh >> j) & 1) << 4) + m;
            dst[j + 16] = d * float((b[i].qs[j] >> 4) | int((qh >> (j + 16)) & 1) << 4) + m;
        }
    }
}

void from_f32_q5_1(const float* src, void* dst, int64_t n) {
    auto* b = static_cast<BlockQ5_1*>(dst);
    for (int64_t i = 0; i < n / kBlock32; ++i, src += kBlock32) {
        const auto [lo, hi] = std::minmax_element(src, src + kBlock32);
        float d, m;
        b[i].d = store_scale((*hi - *lo) / 31.0f, d);
        b[i].m = store_scale(*lo, m);
        const float inv = inverse(d);
        uint32_t qh = 0;
        for (int j = 0; j < 16; ++j) {
            const int a = quantize_clamped(src[j] - m, inv, 0, 31);
            const int c = quantize_clamped(src[j + 16] - m, inv, 0, 31);
            b[i].qs[j] = uint8_t((a & 15) | (c & 15) << 4);
            qh |= uint32_t(a >> 4) << j | uint32_t(c >> 4) << (j + 16);
        }
        std::memcpy(b[i].qh, &qh, 4);
    }
}

}  // namespace llamadesk::quant
