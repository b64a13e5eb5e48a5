// A plain, obviously correct Llama 2 forward pass in the style of llama2.c's run.c: one token at a
// time, a contiguous (layer, position, kv_dim) cache, scalar loops, weights read row by row as
// f32. The CPU backend's tests compare against it.
#pragma once

#include <vector>

#include "model/checkpoint.h"

namespace llamadesk::test {

class ReferenceTransformer {
public:
    // kv_dtype: what the cache stores; other than F32, each key and value row is rounded to it
    // (f16, or q8_0's blocks of 32 along head_dim) as it is written.
    explicit ReferenceTransformer(const Checkpoint& ckpt, DType kv_dtype = DType::F32);

    // Logits (vocab_size) of `token` at `pos`; positions must come in order 0, 1, 2, ...
    std::vector<float> forward(int token, int pos);

private:
    const Checkpoint& ckpt_;
    DType kv_dtype_;
    std::vector<float> key_cache_;    // (n_layers, seq_len, kv_dim)
    std::vector<float> value_cache_;  // (n_layers, seq_len, kv_dim)
};

}  // namespace llamadesk::test
