// Models with random weights in any shape and dtype, for tests and benchmarks, and writers that
// save a checkpoint in the formats we read (so other programs can read the same weights).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/checkpoint.h"
#include "model/weight_mix.h"

namespace llamadesk {

// Weights ~ N(0, 1/sqrt(dim))-ish, norms ~ 1, stored in the mix's types (quantized by the reference
// quantizers); deterministic for a seed. Owns its storage. vocab comes with a byte-level
// EmbeddedVocab so the model is fully usable.
Checkpoint make_synthetic_checkpoint(const ModelConfig& config, WeightMix mix, uint64_t seed,
                                     bool tied_classifier = true);

// The same in F32 on a byte-level BPE vocabulary with Llama 3's special tokens (make_bpe_vocab of
// merges; config's vocab_size becomes its size): a model that writes the Llama 3 chat formats.
Checkpoint make_synthetic_bpe_checkpoint(ModelConfig config, const std::vector<std::string>& merges, uint64_t seed);

// Named shapes: llama2.c's stories models "260K", "15M", "110M", "110M-gqa"; Llama 2 "7B"; Llama 3
// "8B" and the small Llama 3-shaped "llama3-test" (both with a 128256-token vocabulary).
// Throws EngineError(InvalidArgument) for an unknown name.
ModelConfig synthetic_config(const std::string& name);

// GGUF v3, architecture llama, tensors in ckpt's dtypes, vocabulary in tokenizer.ggml.*.
void write_gguf(const Checkpoint& ckpt, const std::string& path);
// A Hugging Face folder: config.json, model.safetensors (n_shards > 1: shards and their index,
// named as save_pretrained names them) and tokenizer.model from an embedded vocabulary. F32, F16
// and BF16 weights only.
void write_hf(const Checkpoint& ckpt, const std::string& dir, int n_shards = 1);
// A Meta folder: params.json (multiple_of and ffn_dim_multiplier chosen so Meta's FFN formula gives
// hidden_dim), consolidated.NN.pth per model-parallel shard, split as Meta's layers shard, and
// tokenizer.model from an embedded vocabulary (tiktoken's form for a byte-level one). F32, F16 and
// BF16 weights; norms are stored in the matrices' type, as Meta stores them.
void write_meta(const Checkpoint& ckpt, const std::string& dir, int n_shards = 1);
// llama2.c legacy format (F32 only).
void write_llama2c(const Checkpoint& ckpt, const std::string& path);

}  // namespace llamadesk
