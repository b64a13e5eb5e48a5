// The tensors of a Llama model, by GGUF name, with the shape the config implies: the one list
// the readers, the writers, the synthetic model and the validation walk.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/checkpoint.h"

namespace llamadesk {

struct TensorSlot {
    std::string name;   // GGUF name, e.g. "blk.3.attn_q.weight"
    int64_t rows = 0;   // expected shape (rows, cols); norms are (1, dim)
    int64_t cols = 0;
    bool is_norm = false;
    TensorView* view = nullptr;  // where the tensor goes in the ModelWeights it was made from
};

// "blk.<layer>.<part>.weight"
std::string layer_tensor_name(int layer, const char* part);

// All tensors in GGUF order: token_embd, blk.0.* ... blk.N.*, output_norm, then output when
// with_output. Resizes weights.layers to config.n_layers; the views are bound to `weights`.
std::vector<TensorSlot> tensor_slots(const ModelConfig& config, ModelWeights& weights,
                                     bool with_output);

}  // namespace llamadesk
