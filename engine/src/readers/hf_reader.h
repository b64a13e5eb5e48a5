// Hugging Face checkpoint folders: config.json, model.safetensors or shards listed in
// model.safetensors.index.json, and tokenizer.model. Matrices stay memory-mapped as stored
// (F32, F16, BF16), except wq and wk, whose rows are put back in Meta's rotary order (a copy of
// those two matrices per layer).
#pragma once

#include <cstdint>
#include <string>

#include "model/checkpoint.h"

namespace llamadesk {

// Hugging Face's conversion of Meta's weights permutes the rows of wq and wk within each head:
// Meta (and GGUF, llama2.c) keep each rotary pair in rows 2i and 2i + 1, Hugging Face puts them
// head_dim / 2 rows apart. Meta's row r is Hugging Face's row hf_row_of(r).
inline int64_t hf_row_of(int64_t r, int head_dim) {
    const int64_t head = r / head_dim, m = r % head_dim;
    return head * head_dim + (m % 2) * (head_dim / 2) + m / 2;
}

// A folder holding config.json and model.safetensors or model.safetensors.index.json.
bool is_hf_folder(const std::string& dir);

Checkpoint read_hf_checkpoint(const std::string& dir);

}  // namespace llamadesk
