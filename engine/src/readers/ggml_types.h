// GGML's names for what GGUF files store: tensor type ids (the ones this version reads are rows of
// model/weight_types.h) and llama.cpp's general.file_type labels.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace llamadesk {

// The GGML name of a tensor type id ("Q4_K", "BF16"), or nullptr for an id GGML never defined.
const char* ggml_type_name(uint32_t type);

// llama.cpp's name of a general.file_type value ("Q4_K_M", "MOSTLY_F16" is "F16"), or nullptr.
const char* ggml_file_type_name(uint32_t file_type);
// The general.file_type value of a label ("Q4_K_M", "F16"; any case), if llama.cpp defines one.
std::optional<uint32_t> ggml_file_type_id(std::string_view label);

}  // namespace llamadesk
