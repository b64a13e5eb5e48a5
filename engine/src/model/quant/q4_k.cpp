// Q4_K: super-blocks of 256 in 8 sub-blocks of 32, four-bit values, 6-bit sub-block scales and
// mins under f16 super-block scales (4.5 bits per weight).
#include "model/quant/block_math.h"
#include "model/quant/blocks.h"
#include "model/quant/quant.h"

namespace llamadesk::quant {

void to_f32_q4_k(const void* src, float* dst, int64_t n) {
    const auto* b = static_cast<const BlockQ4_K*>(src);
    for (int64_t i = 0; i < n / kBlock256; ++i, dst += kBlock256) {
        const float d = f16_to_f32(b[i].d), dmin = f16_to_f32(b[i].dmin);
        for (int c = 0; c < 4; ++c) {  // 64 elements: sub-blocks 2c (low nibbles) and 2c + 1
            uint8_t sc0, m0, sc1, m1;
            unpack_k_scale(b[i].scales, 2 * c, sc0, m0);
            unpack_k_scale(b[i].scales, 2 * c + 1, sc1, m1);
            const uint8_t* q = b[i].qs + 32 * c;
            for (int l = 0; l < 32; ++l) {
                dst[64 * c + l] = d * float(sc0) * float(q[l] & 15) - dmin * float(m0);
                dst[64 * c + 32 + l] = d * float(sc1) * float(q[l] >> 4) - dmin * float(m1);
            }
        }
    }
}

void from_f32_q4_k(const float* src, void* dst, int64_t n) {
    auto* b = static_cast<BlockQ4_K*>(dst);
    for (int64_t i = 0; i < n / kBlock256; ++i, src += kBlock256) {
        const KScales k = choose_k_scales(src, 15);
        b[i].d = k.d_bits;
        b[i].dmin = k.dmin_bits;
        pack_k_scales(k, b[i].scales);
        int q[kBlock256];
        k_levels(src, k, 15, q);
        for (int c = 0; c < 4; ++c)
            for (int l = 0; l < 32; ++l) b[i].qs[32 * c + l] = uint8_t(q[64 * c + l] | q[64 * c + 32 + l] << 4);
    }
}

}  // namespace llamadesk::quant
