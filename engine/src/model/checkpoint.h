// What every checkpoint reader produces: hyper-parameters, named weight tensors (pointing into a
// memory-mapped file where the format allows, or into buffers the checkpoint owns) and where the
// vocabulary comes from.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "model/dtype.h"
#include "model/model_config.h"
#include "model/weight_types.h"

namespace llamadesk {

// A 2-D row-major weight: rows x cols (for projections: out_features x in_features, as in
// llama2.c's matmul and GGUF's ne[1] x ne[0]). Vectors (norms) have rows == 1.
struct TensorView {
    std::string name;
    DType dtype = DType::F32;
    int64_t rows = 0;
    int64_t cols = 0;
    const void* data = nullptr;
    // Rows regrouped by this many for the CPU's kernels (cpu::Kernels::interleave_rows), in a
    // backend's own copy; 0 for plain rows, the only layout row() and row_to_f32() read.
    int interleaved_rows = 0;

    int64_t n_elements() const { return rows * cols; }
    // A row is whole blocks of its type (the readers check that cols is a multiple of the block).
    int64_t row_bytes() const { return weight_type(dtype).bytes(cols); }
    int64_t n_bytes() const { return rows * row_bytes(); }
    const void* row(int64_t r) const { return static_cast<const char*>(data) + r * row_bytes(); }
    // Row r as F32 (embedding lookups, references).
    void row_to_f32(int64_t r, float* out) const { weight_type(dtype).to_f32(row(r), out, cols); }
};

// Norms are always F32 in memory (readers widen other norms); each matrix has its own type, as
// llama.cpp's quantizer mixes them (a Q4_K_M file holds Q4_K and Q6_K matrices).
struct LayerWeights {
    TensorView attention_norm;  // (1, dim)
    TensorView wq;              // (n_heads * head_dim, dim)
    TensorView wk;              // (n_kv_heads * head_dim, dim)
    TensorView wv;              // (n_kv_heads * head_dim, dim)
    TensorView wo;              // (dim, n_heads * head_dim)
    TensorView ffn_norm;        // (1, dim)
    TensorView w1;              // gate (hidden_dim, dim)
    TensorView w2;              // down (dim, hidden_dim)
    TensorView w3;              // up   (hidden_dim, dim)
};

struct ModelWeights {
    TensorView token_embedding;  // (vocab_size, dim)
    std::vector<LayerWeights> layers;
    TensorView final_norm;       // (1, dim)
    TensorView output;           // (vocab_size, dim); same data as token_embedding when tied

    // The classifier is the embedding table itself: its bytes and parameters count once.
    bool classifier_tied() const { return output.data == token_embedding.data; }
};

// A vocabulary carried inside the checkpoint (GGUF tokenizer.ggml.*), or read from a Hugging Face
// tokenizer.json or a tiktoken file into the same form.
struct EmbeddedVocab {
    std::string model;                 // tokenizer.ggml.model: "llama" (SentencePiece) or "gpt2" (byte-level BPE)
    std::string pre;                   // gpt2: tokenizer.ggml.pre, the pre-tokenizer ("llama-bpe")
    std::vector<std::string> tokens;   // gpt2: in GPT-2's byte-level alphabet ("Ġthe")
    std::vector<std::string> merges;   // gpt2: "left right", by rank
    std::vector<float> scores;         // empty: all zero
    std::vector<int32_t> token_types;  // SentencePiece types: 1 normal, 2 unknown, 3 control, 4 user, 6 byte
    int32_t bos_id = 1, eos_id = 2, unk_id = 0;
    std::vector<int32_t> eog_ids;      // more ids that end generation (GGUF eot/eom, HF eos lists)
    bool add_bos = true;
};

struct TokenizerSource {
    std::string model_file;            // a SentencePiece tokenizer.model, if one was found or given
    std::shared_ptr<EmbeddedVocab> embedded;  // else the checkpoint's own vocabulary
    std::string describe() const;      // for ModelInfo::tokenizer
};

struct Checkpoint {
    std::string path;
    std::string format;                // "gguf", "llama2c"
    ModelConfig config;
    ModelWeights weights;
    std::string file_type;             // the writer's label for the mix, e.g. "Q4_K_M"; may be empty
    TokenizerSource tokenizer;
    std::string chat_template;         // GGUF tokenizer.chat_template (Jinja), when present
    std::string name;                  // GGUF general.name, when present
    std::shared_ptr<const void> storage;  // keeps the mapping / owned buffers alive
    // Moves weights used in place from a mapped file into anonymous memory at the same addresses
    // (MappedFile::move_to_memory), for the CPU backend, all but copied: tensors the caller keeps
    // its own copy of, which stay mapped. Null where the format has none.
    std::function<void(std::span<const TensorView> copied)> move_to_memory;
    // Drops the mapped pages of a tensor the caller copied (a later read fetches them from the file
    // again); nothing where they were moved to memory or are not mapped. Null where nothing is mapped.
    std::function<void(const TensorView&)> release_pages;

    int64_t n_params() const;
    // How many matrices (every tensor but the norms) each type holds, in DType order.
    std::vector<std::pair<DType, int>> matrix_types() const;
    // The type holding most of the matrices' bytes ("f16" for an F16 file, "q4_k" for Q4_K_M).
    DType main_weight_dtype() const;
    // "Q4_K_M: Q4_K ×97, Q6_K ×19" (the label, when there is one, then the census).
    std::string describe_weight_types() const;
    // Bytes of every tensor as stored (the tied classifier counted once).
    int64_t weight_bytes() const;
    // Bytes of the matrices one decode step reads: every layer's projections and the classifier
    // (the whole embedding table when the classifier is tied to it).
    int64_t weight_bytes_per_token() const;
};

// Opens a checkpoint file or a folder holding one, detecting the format by content.
// tokenizer_path, when non-empty, overrides the vocabulary. Every size, offset and count in the
// file is checked before use; failures throw EngineError with a message naming the file and field.
Checkpoint open_checkpoint(const std::string& path, const std::string& tokenizer_path = {});

// Checks that every tensor has the shape config implies, reading no weight.
void validate_shapes(const Checkpoint& ckpt);
// validate_shapes(), and that every tensor holds only finite values (reading every byte).
void validate_weights(const Checkpoint& ckpt);

}  // namespace llamadesk
