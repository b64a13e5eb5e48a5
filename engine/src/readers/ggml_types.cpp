#include "readers/ggml_types.h"

#include <array>
#include <string_view>

namespace llamadesk {

namespace {

// Index = GGML type id (ggml.h); nullptr marks ids that were never used in GGUF files.
constexpr std::array<const char*, 40> kTypeNames = {
    "F32",     "F16",     "Q4_0",     "Q4_1",     nullptr,    nullptr,    "Q5_0",    "Q5_1",
    "Q8_0",    "Q8_1",    "Q2_K",     "Q3_K",     "Q4_K",     "Q5_K",     "Q6_K",    "Q8_K",
    "IQ2_XXS", "IQ2_XS",  "IQ3_XXS",  "IQ1_S",    "IQ4_NL",   "IQ3_S",    "IQ2_S",   "IQ4_XS",
    "I8",      "I16",     "I32",      "I64",      "F64",      "IQ1_M",    "BF16",    "Q4_0_4_4",
    "Q4_0_4_8", "Q4_0_8_8", "TQ1_0",  "TQ2_0",    "IQ4_NL_4_4", "IQ4_NL_4_8", "IQ4_NL_8_8", "MXFP4",
};

}  // namespace

const char* ggml_type_name(uint32_t type) {
    return type < kTypeNames.size() ? kTypeNames[type] : nullptr;
}

std::optional<DType> ggml_type_dtype(uint32_t type) {
    switch (type) {
    case 0: return DType::F32;
    case 1: return DType::F16;
    case 30: return DType::BF16;
    default: return std::nullopt;
    }
}

bool ggml_type_is_quantized(uint32_t type) {
    const char* name = ggml_type_name(type);
    if (name == nullptr || ggml_type_dtype(type)) return false;
    const std::string_view n = name;
    return !(n == "I8" || n == "I16" || n == "I32" || n == "I64" || n == "F64");
}

}  // namespace llamadesk
