// Q5_K: Q4_K with a fifth bit per value (5.5 bits per weight).
#include <cstring>

#include "model/quant/block_math.h"
#include "model/quant/blocks.h"
#include "model/quant/quant.h"

namespace llamadesk::quant {

void to_f32_q5_k(const void* src, float* dst, int64_t n) {
    const auto* b = static_cast<const BlockQ5_K*>(src);
    for (int64_t i = 0; i < n / kBlock256; ++i, dst += kBlock256) {
        const float d = f16_to_f32(b[i].d), dmin = f16_to_f32(b[i].dmin);
        for (int c = 0; c < 4; ++c) {
            uint8_t sc0, m0, sc1, m1;
            unpack_k_scale(b[i].scales, 2 * c, sc0, m0);
            unpack_k_scale(b[i].scales, 2 * c + 1, sc1, m1);
            const uint8_t* q = b[i].qs + 32 * c;
            for (int l = 0; l < 32; ++l) {
                const int lo = (q[l] & 15) | ((b[i].qh[l] >> (2 * c)) & 1) << 4;
                const int hi = (q[l] >> 4) | ((b[i].qh[l] >> (2 * c + 1)) & 1) << 4;
                dst[64 * c + l] = d * float(sc0) * float(lo) - dmin * float(m0);
                dst[64 * c + 32 + l] = d * float(sc1) * float(hi) - dmin * float(m1);
            }
        }
    }
}

void from_f32_q5_k(const float* src, void* dst, int64_t n) {
    auto* b = static_cast<BlockQ5_K*>(dst);
    for (int64_t i = 0; i < n / kBlock256; ++i, src += kBlock256) {
        const KScales k = choose_k_scales(src, 31);
        b[i].d = k.d_bits;
        b[i].dmin = k.dmin_bits;
        pack_k_scales(k, b[i].scales);
        int q[kBlock256];
        k_levels(src, k, 31, q);
        std::memset(b[i].qh, 0, sizeof b[i].qh);
        for (int c = 0; c < 4; ++c)
            for (int l = 0; l < 32; ++l) {
                const int lo = q[64 * c + l], hi = q[64 * c + 32 + l];
                b[i].qs[32 * c + l] = uint8_t((lo & 15) | (hi & 15) << 4);
                b[i].qh[l] |= uint8_t((lo >> 4) << (2 * c) | (hi >> 4) << (2 * c + 1));
            }
    }
}

}  // namespace llamadesk::quant
