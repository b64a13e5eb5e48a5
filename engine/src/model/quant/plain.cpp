// F32, F16 and BF16: the plain float types.
#include <algorithm>

#include "core/cpu_features.h"
#include "model/dtype.h"
#include "model/quant/quant.h"

namespace llamadesk {

float f16_to_f32(uint16_t h) {
    const uint32_t sign = uint32_t(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    uint32_t bits;
    if (exp == 0) {
        if (mant == 0) {
            bits = sign;
        } else {  // subnormal: normalise
            exp = 127 - 15 + 1;
            while ((mant & 0x400u) == 0) {
                mant <<= 1;
                --exp;
            }
            mant &= 0x3ffu;
            bits = sign | (exp << 23) | (mant << 13);
        }
    } else if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (mant << 13);
    } else {
        bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
    }
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

uint16_t f32_to_f16(float f) {
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    const uint16_t sign = uint16_t((bits >> 16) & 0x8000u);
    const uint32_t abs = bits & 0x7fffffffu;
    if (abs > 0x7f800000u) return sign | 0x7e00u;               // NaN
    if (abs >= 0x477ff000u) return sign | 0x7c00u;              // overflow to inf
    if (abs < 0x38800000u) {                                    // subnormal or zero
        if (abs < 0x33000000u) return sign;
        const uint32_t exp = abs >> 23;
        const uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
        const uint32_t shift = 126 - exp;                       // 14..24
        uint32_t half = mant >> shift;
        const uint32_t rem = mant & ((1u << shift) - 1);
        const uint32_t halfway = 1u << (shift - 1);
        if (rem > halfway || (rem == halfway && (half & 1u))) ++half;
        return sign | uint16_t(half);
    }
    uint32_t h = ((abs - 0x38000000u) >> 13);
    const uint32_t rem = abs & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
    return sign | uint16_t(h);
}

namespace quant {

void to_f32_f32(const void* src, float* dst, int64_t n) {
    std::copy_n(static_cast<const float*>(src), n, dst);
}
void from_f32_f32(const float* src, void* dst, int64_t n) { std::copy_n(src, n, static_cast<float*>(dst)); }

#if defined(LLAMADESK_F16C)
void to_f32_f16_f16c(const uint16_t* src, float* dst, int64_t n);
void from_f32_f16_f16c(const float* src, uint16_t* dst, int64_t n);
#endif

void to_f32_f16(const void* src, float* dst, int64_t n) {
#if defined(LLAMADESK_F16C)
    if (cpu_features().f16c) return to_f32_f16_f16c(static_cast<const uint16_t*>(src), dst, n);
#endif
    for (int64_t i = 0; i < n; ++i) dst[i] = llamadesk::f16_to_f32(static_cast<const uint16_t*>(src)[i]);
}
void from_f32_f16(const float* src, void* dst, int64_t n) {
#if defined(LLAMADESK_F16C)
    if (cpu_features().f16c) return from_f32_f16_f16c(src, static_cast<uint16_t*>(dst), n);
#endif
    for (int64_t i = 0; i < n; ++i) static_cast<uint16_t*>(dst)[i] = f32_to_f16(src[i]);
}

void to_f32_bf16(const void* src, float* dst, int64_t n) {
    for (int64_t i = 0; i < n; ++i) dst[i] = llamadesk::bf16_to_f32(static_cast<const uint16_t*>(src)[i]);
}
void from_f32_bf16(const float* src, void* dst, int64_t n) {
    for (int64_t i = 0; i < n; ++i) static_cast<uint16_t*>(dst)[i] = f32_to_bf16(src[i]);
}

}  // namespace quant

}  // namespace llamadesk
