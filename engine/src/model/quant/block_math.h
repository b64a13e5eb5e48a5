// Small helpers the reference quantizers share.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "model/dtype.h"

namespace llamadesk::quant {

// The value of largest magnitude in x[0..n), with its sign.
inline float signed_absmax(const float* x, int n) {
    float best = 0.0f;
    for (int i = 0; i < n; ++i)
        if (std::fabs(x[i]) > std::fabs(best)) best = x[i];
    return best;
}

// A scale stored as f16; quantizing with the stored value keeps the round trip exact to it.
inline uint16_t store_scale(float d, float& stored) {
    const uint16_t h = f32_to_f16(d);
    stored = f16_to_f32(h);
    return h;
}

// round(x * inv) clamped to [lo, hi]; inv == 0 gives 0 clamped.
inline int quantize_clamped(float x, float inv, int lo, int hi) {
    return std::clamp(int(std::lround(x * inv)), lo, hi);
}

inline float inverse(float d) { return d != 0.0f ? 1.0f / d : 0.0f; }

// Q4_K/Q5_K super-block scales: each sub-block of 32 spans [min(0, lo), hi] in n_levels steps;
// the 8 steps and 8 offsets are stored as 6-bit multiples of the f16 d and dmin. On return
// scale[s] and min[s] are the 6-bit values and d, dmin the stored f16 values (as floats).
struct KScales {
    uint16_t d_bits, dmin_bits;
    float d, dmin;
    uint8_t scale[8], min[8];
};

inline KScales choose_k_scales(const float* x, int n_levels) {
    float step[8], offset[8], max_step = 0.0f, max_offset = 0.0f;
    for (int s = 0; s < 8; ++s) {
        const auto [lo, hi] = std::minmax_element(x + 32 * s, x + 32 * s + 32);
        offset[s] = -std::min(0.0f, *lo);
        step[s] = (*hi + offset[s]) / float(n_levels);
        max_step = std::max(max_step, step[s]);
        max_offset = std::max(max_offset, offset[s]);
    }
    KScales k;
    k.d_bits = store_scale(max_step / 63.0f, k.d);
    k.dmin_bits = store_scale(max_offset / 63.0f, k.dmin);
    for (int s = 0; s < 8; ++s) {
        // Round the step up so the sub-block's largest value still fits in n_levels.
        k.scale[s] = uint8_t(std::clamp(int(std::ceil(step[s] * inverse(k.d))), 0, 63));
        k.min[s] = uint8_t(quantize_clamped(offset[s], inverse(k.dmin), 0, 63));
    }
    return k;
}

// The super-block's 256 values as levels 0..n_levels under the scales k.
inline void k_levels(const float* x, const KScales& k, int n_levels, int* q) {
    for (int s = 0; s < 8; ++s) {
        const float inv = inverse(k.d * float(k.scale[s])), offset = k.dmin * float(k.min[s]);
        for (int l = 0; l < 32; ++l) q[32 * s + l] = quantize_clamped(x[32 * s + l] + offset, inv, 0, n_levels);
    }
}

// The inverse of unpack_k_scale (blocks.h).
inline void pack_k_scales(const KScales& k, uint8_t* out) {
    for (int s = 0; s < 4; ++s) {
        out[s] = uint8_t(k.scale[s] | (k.scale[s + 4] >> 4) << 6);
        out[s + 4] = uint8_t(k.min[s] | (k.min[s + 4] >> 4) << 6);
        out[s + 8] = uint8_t((k.scale[s + 4] & 15) | (k.min[s + 4] & 15) << 4);
    }
}

}  // namespace llamadesk::quant
