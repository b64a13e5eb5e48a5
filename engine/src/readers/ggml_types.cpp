#include "readers/ggml_types.h"

#include <array>
#include <cctype>
#include <utility>

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

// llama.cpp's llama_ftype values (LLAMA_FTYPE_MOSTLY_<label>).
constexpr std::pair<uint32_t, const char*> kFileTypes[] = {
    {0, "F32"},     {1, "F16"},     {2, "Q4_0"},    {3, "Q4_1"},    {7, "Q8_0"},    {8, "Q5_0"},
    {9, "Q5_1"},    {10, "Q2_K"},   {11, "Q3_K_S"}, {12, "Q3_K_M"}, {13, "Q3_K_L"}, {14, "Q4_K_S"},
    {15, "Q4_K_M"}, {16, "Q5_K_S"}, {17, "Q5_K_M"}, {18, "Q6_K"},   {32, "BF16"},
};

}  // namespace

const char* ggml_type_name(uint32_t type) {
    return type < kTypeNames.size() ? kTypeNames[type] : nullptr;
}

const char* ggml_file_type_name(uint32_t file_type) {
    for (const auto& [id, name] : kFileTypes)
        if (id == file_type) return name;
    return nullptr;
}

std::optional<uint32_t> ggml_file_type_id(std::string_view label) {
    for (const auto& [id, name] : kFileTypes) {
        const std::string_view n = name;
        bool same = n.size() == label.size();
        for (size_t i = 0; same && i < n.size(); ++i)
            same = n[i] == std::toupper(static_cast<unsigned char>(label[i]));
        if (same) return id;
    }
    return std::nullopt;
}

}  // namespace llamadesk
