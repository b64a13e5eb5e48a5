// GGML tensor type ids as GGUF stores them, and which of them this version can use.
#pragma once

#include <cstdint>
#include <optional>

#include "model/dtype.h"

namespace llamadesk {

// The GGML name of a type id ("Q4_K", "BF16"), or nullptr for an id GGML never defined.
const char* ggml_type_name(uint32_t type);
// F32, F16 and BF16 map to a DType; every other type has none.
std::optional<DType> ggml_type_dtype(uint32_t type);
// Block-quantized formats (Q*, IQ*, TQ*, MXFP4), as opposed to plain integer or F64 types.
bool ggml_type_is_quantized(uint32_t type);

inline uint32_t ggml_type_id(DType t) {
    switch (t) {
    case DType::F32: return 0;
    case DType::F16: return 1;
    case DType::BF16: return 30;
    }
    return 0;
}

}  // namespace llamadesk
