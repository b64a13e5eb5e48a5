// The tensors of a Llama model, by GGUF name, with the shape the config implies: the one list
// the readers, the writers, the synthetic model, the validation, the byte and parameter counts and
// the backends walk. Code that needs to know which tensor a slot is asks its role and layer
// instead of listing the tensors again.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/checkpoint.h"

namespace llamadesk {

// What a tensor does in the transformer, whatever its file calls it.
enum class TensorRole {
    TokenEmbedding,   // token_embd
    AttentionNorm,    // blk.N.attn_norm
    Query,            // blk.N.attn_q   (wq)
    Key,              // blk.N.attn_k   (wk)
    Value,            // blk.N.attn_v   (wv)
    AttentionOutput,  // blk.N.attn_output (wo)
    FfnNorm,          // blk.N.ffn_norm
    FfnGate,          // blk.N.ffn_gate (w1)
    FfnDown,          // blk.N.ffn_down (w2)
    FfnUp,            // blk.N.ffn_up   (w3)
    OutputNorm,       // output_norm
    Output,           // output: the classifier
};

// View is TensorView for slots that bind a model being filled in, const TensorView for slots
// that only read one.
template <typename View>
struct BasicTensorSlot {
    std::string name;   // GGUF name, e.g. "blk.3.attn_q.weight"
    TensorRole role = TensorRole::TokenEmbedding;
    int layer = -1;     // the block the tensor belongs to; -1 for the whole-model tensors
    int64_t rows = 0;   // expected shape (rows, cols); norms are (1, dim)
    int64_t cols = 0;
    View* view = nullptr;  // where the tensor is in the ModelWeights the slots were made from

    bool is_norm() const {
        return role == TensorRole::AttentionNorm || role == TensorRole::FfnNorm ||
               role == TensorRole::OutputNorm;
    }
    // Whether a decode step reads the whole tensor: every projection and the classifier. The
    // embedding table is only looked up (one row a token) and the norms are vectors.
    bool read_whole_per_token() const { return !is_norm() && role != TensorRole::TokenEmbedding; }
};

using TensorSlot = BasicTensorSlot<TensorView>;
using ConstTensorSlot = BasicTensorSlot<const TensorView>;

// How each checkpoint format names a tensor.
enum class TensorNaming {
    Gguf,         // "blk.3.attn_q.weight" (the slots' own names)
    HuggingFace,  // "model.layers.3.self_attn.q_proj.weight"
    Meta,         // "layers.3.attention.wq.weight" (consolidated.*.pth)
};

// "blk.<layer>.<part>.weight" (llama2.c's file order names its groups by GGUF part)
std::string layer_tensor_name(int layer, const char* part);

// The name of the tensor with this role (and layer, for per-layer roles) in a format.
std::string tensor_name(TensorRole role, int layer, TensorNaming naming);

// All tensors in GGUF order: token_embd, blk.0.* ... blk.N.*, output_norm, then output when
// with_output. Resizes weights.layers to config.n_layers; the views are bound to `weights`.
std::vector<TensorSlot> tensor_slots(const ModelConfig& config, ModelWeights& weights,
                                     bool with_output);

// The same list over weights already filled in, for code that only reads them. Walks the layers
// weights holds (callers that care check that count against config.n_layers themselves).
std::vector<ConstTensorSlot> tensor_slots(const ModelConfig& config, const ModelWeights& weights,
                                          bool with_output);

}  // namespace llamadesk
