// Conversions of every element type to and from F32, one file per type; model/weight_types.cpp
// puts them in the table. from_f32 of a block type is the project's reference quantizer.
#pragma once

#include <cstdint>

namespace llamadesk::quant {

#define LLAMADESK_QUANT_TYPE(t)                                  \
    void to_f32_##t(const void* src, float* dst, int64_t n);     \
    void from_f32_##t(const float* src, void* dst, int64_t n);

LLAMADESK_QUANT_TYPE(f32)
LLAMADESK_QUANT_TYPE(f16)
LLAMADESK_QUANT_TYPE(bf16)
LLAMADESK_QUANT_TYPE(q8_0)
LLAMADESK_QUANT_TYPE(q4_0)
LLAMADESK_QUANT_TYPE(q4_1)
LLAMADESK_QUANT_TYPE(q5_0)
LLAMADESK_QUANT_TYPE(q5_1)
LLAMADESK_QUANT_TYPE(q4_k)
LLAMADESK_QUANT_TYPE(q5_k)
LLAMADESK_QUANT_TYPE(q6_k)

#undef LLAMADESK_QUANT_TYPE

}  // namespace llamadesk::quant
