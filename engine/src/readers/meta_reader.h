// Meta's own checkpoint folders: params.json, consolidated.00.pth ... (torch.save zip archives,
// read through read_zip_entries and the restricted unpickler) and tokenizer.model. One shard is
// used in place, memory-mapped as stored (bf16 as Meta ships it, f16, f32). Model-parallel shards
// (13B: 2, 70B: 8) are joined at load into buffers the checkpoint owns, split the way Meta's
// layers shard: wq, wk, wv, w1, w3 and output by rows, wo, w2 and tok_embeddings by columns,
// norms replicated.
#pragma once

#include <string>

#include "model/checkpoint.h"
#include "model/model_config.h"
#include "model/tensor_slots.h"

namespace llamadesk {

// How a role's tensor is split across Meta's model-parallel shards.
enum class MetaSplit { Replicated, Rows, Columns };
MetaSplit meta_split_of(TensorRole role);

// Meta's FFN width (llama/model.py): two thirds of 4 * dim, times ffn_dim_multiplier when given,
// rounded up to a multiple of multiple_of.
int meta_ffn_width(int dim, int multiple_of, double ffn_dim_multiplier);

// params.json: the hyper-parameters it states (vocab_size may be -1 and hidden_dim is left 0: the
// tensors say them) and the FFN formula's inputs.
struct MetaParams {
    ModelConfig config;
    int multiple_of = 256;
    double ffn_dim_multiplier = 0;  // 0: absent
};
MetaParams parse_meta_params(const std::string& text, const std::string& path);

// A folder holding params.json and consolidated.00.pth.
bool is_meta_folder(const std::string& dir);

Checkpoint read_meta_checkpoint(const std::string& dir);

}  // namespace llamadesk
