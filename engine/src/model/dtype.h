// Element types of weights (and of KV caches) as stored. Plain floats (F32, F16, BF16) and
// llama.cpp's block-quantized types stay as stored in memory: kernels widen them in registers.
// How each type is laid out and converted lives in one table, model/weight_types.h.
#pragma once

#include <cstdint>
#include <cstring>

#include "model/dtype_id.h"

namespace llamadesk {

// Scalar conversions, for references, tests and the few places off the hot path.
inline float bf16_to_f32(uint16_t h) {
    uint32_t bits = uint32_t(h) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

inline uint16_t f32_to_bf16(float f) {  // round to nearest even; NaN stays NaN
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    if ((bits & 0x7fffffffu) > 0x7f800000u) return uint16_t((bits >> 16) | 0x40);
    bits += 0x7fffu + ((bits >> 16) & 1u);
    return uint16_t(bits >> 16);
}

float f16_to_f32(uint16_t h);
uint16_t f32_to_f16(float f);

}  // namespace llamadesk
