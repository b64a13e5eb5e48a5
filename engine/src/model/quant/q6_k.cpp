// Q6_K: super-blocks of 256 in 16 sub-blocks of 16, six-bit values centred on 32, int8 sub-block
// scales under one f16 scale (6.5625 bits per weight).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "model/quant/block_math.h"
#include "model/quant/blocks.h"
#include "model/quant/quant.h"

namespace llamadesk::quant {

namespace {

// q[0..256) in storage order, as described in blocks.h.
void unpack_q6(const BlockQ6_K& b, int* q) {
    for (int h = 0; h < 2; ++h) {
        const uint8_t* L = b.ql + 64 * h;
        const uint8_t* H = b.qh + 32 * h;
        int* out = q + 128 * h;
        for (int l = 0; l < 32; ++l) {
            out[l] = (L[l] & 15) | ((H[l] >> 0) & 3) << 4;
            out[l + 32] = (L[l + 32] & 15) | ((H[l] >> 2) & 3) << 4;
            out[l + 64] = (L[l] >> 4) | ((H[l] >> 4) & 3) << 4;
            out[l + 96] = (L[l + 32] >> 4) | ((H[l] >> 6) & 3) << 4;
        }
    }
}

void pack_q6(const int* q, BlockQ6_K& b) {
    std::memset(b.ql, 0, sizeof b.ql);
    std::memset(b.qh, 0, sizeof b.qh);
    for (int h = 0; h < 2; ++h) {
        uint8_t* L = b.ql + 64 * h;
        uint8_t* H = b.qh + 32 * h;
        const int* in = q + 128 * h;
        for (int l = 0; l < 32; ++l) {
            L[l] = uint8_t((in[l] & 15) | (in[l + 64] & 15) << 4);
            L[l + 32] = uint8_t((in[l + 32] & 15) | (in[l + 96] & 15) << 4);
            H[l] = uint8_t((in[l] >> 4) | (in[l + 32] >> 4) << 2 | (in[l + 64] >> 4) << 4 | (in[l + 96] >> 4) << 6);
        }
    }
}

}  // namespace

void to_f32_q6_k(const void* src, float* dst, int64_t n) {
    const auto* b = static_cast<const BlockQ6_K*>(src);
    for (int64_t i = 0; i < n / kBlock256; ++i, dst += kBlock256) {
        const float d = f16_to_f32(b[i].d);
        int q[kBlock256];
        unpack_q6(b[i], q);
        for (int j = 0; j < kBlock256; ++j) dst[j] = d * float(b[i].scales[j / 16]) * float(q[j] - 32);
    }
}

void from_f32_q6_k(const float* src, void* dst, int64_t n) {
    auto* b = static_cast<BlockQ6_K*>(dst);
    for (int64_t i = 0; i < n / kBlock256; ++i, src += kBlock256) {
        float step[16], largest = 0.0f;
        for (int s = 0; s < 16; ++s) {
            step[s] = signed_absmax(src + 16 * s, 16) / -32.0f;
            if (std::fabs(step[s]) > std::fabs(largest)) largest = step[s];
        }
        float d;
        b[i].d = store_scale(std::fabs(largest) / 127.0f, d);
        int q[kBlock256];
        for (int s = 0; s < 16; ++s) {
            b[i].scales[s] = int8_t(quantize_clamped(step[s], inverse(d), -127, 127));
            const float inv = inverse(d * float(b[i].scales[s]));
            for (int l = 0; l < 16; ++l) q[16 * s + l] = quantize_clamped(src[16 * s + l], inv, -32, 31) + 32;
        }
        pack_q6(q, b[i]);
    }
}

}  // namespace llamadesk::quant
