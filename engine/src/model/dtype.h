// Element types of weights as stored in a checkpoint. F16/BF16 stay F16/BF16 in memory and are
// widened to F32 in registers inside the kernels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace llamadesk {

enum class DType : uint8_t { F32, F16, BF16 };

inline size_t dtype_size(DType t) { return t == DType::F32 ? 4 : 2; }

inline const char* dtype_name(DType t) {
    switch (t) {
    case DType::F32: return "f32";
    case DType::F16: return "f16";
    case DType::BF16: return "bf16";
    }
    return "?";
}

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

// Reads element i of a row of any dtype as F32 (slow path).
inline float load_as_f32(const void* data, DType t, size_t i) {
    switch (t) {
    case DType::F32: return static_cast<const float*>(data)[i];
    case DType::F16: return f16_to_f32(static_cast<const uint16_t*>(data)[i]);
    case DType::BF16: return bf16_to_f32(static_cast<const uint16_t*>(data)[i]);
    }
    return 0.0f;
}

}  // namespace llamadesk
