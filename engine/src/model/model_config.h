// Hyper-parameters of a Llama-2-architecture model, whatever file they came from.
#pragma once

#include <cstdint>
#include <string>

#include "model/rope.h"

namespace llamadesk {

// An aggregate: ModelConfig{dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len}.
struct ModelConfig {
    int dim = 0;          // transformer width
    int hidden_dim = 0;   // feed-forward width
    int n_layers = 0;
    int n_heads = 0;      // query heads
    int n_kv_heads = 0;   // key/value heads (grouped-query attention when < n_heads)
    int vocab_size = 0;
    int seq_len = 0;      // context length
    float rope_theta = 10000.0f;
    float norm_eps = 1e-5f;
    RopeScaling rope_scaling;  // Llama 3.1's; none by default

    RopeParams rope() const { return {rope_theta, rope_scaling}; }

    int head_dim() const { return dim / n_heads; }
    int kv_dim() const { return n_kv_heads * head_dim(); }
    int n_rep() const { return n_heads / n_kv_heads; }  // query heads per kv head
};

// Throws EngineError(BadFormat) naming the offending field when the numbers cannot describe a
// model we can run (zero or absurd sizes, heads not dividing dim, ...). `source` prefixes the message.
void validate_config(const ModelConfig& c, const std::string& source);

}  // namespace llamadesk
