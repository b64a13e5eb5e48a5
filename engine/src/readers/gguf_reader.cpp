#include "readers/gguf_reader.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <unordered_map>
#include <vector>

#include "core/error.h"
#include "model/rope.h"
#include "model/tensor_slots.h"
#include "readers/checkpoint_storage.h"
#include "readers/ggml_types.h"
#include "readers/gguf_file.h"
#include "readers/mapped_file.h"

namespace llamadesk {

namespace {

constexpr uint64_t kMaxTokens = 1 << 22;

std::string number_text(double x) {
    char text[32];
    std::snprintf(text, sizeof(text), "%g", x);
    return text;
}

// The vocabulary in tokenizer.ggml.*, or null when the file has no token list.
std::shared_ptr<EmbeddedVocab> vocabulary_of(const GgufFile& f) {
    const GgufValue* tokens = gguf_array(f, "tokenizer.ggml.tokens", false);
    if (!tokens) return nullptr;
    const std::string where = f.path + ": ";
    auto vocab = std::make_shared<EmbeddedVocab>();
    vocab->model = std::string(gguf_string(f, "tokenizer.ggml.model").value_or("llama"));
    const bool bpe = vocab->model == "gpt2";
    if (vocab->model != "llama" && !bpe)
        fail(ErrorCode::Unsupported, where + "tokenizer.ggml.model is '" + gguf_printable(vocab->model) +
                                         "'; supported: 'llama' (SentencePiece) and 'gpt2' "
                                         "(byte-level BPE)");
    if (bpe) vocab->pre = std::string(gguf_string(f, "tokenizer.ggml.pre").value_or("llama-bpe"));
    if (tokens->count == 0 || tokens->count > kMaxTokens)
        fail(ErrorCode::BadFormat, where + "tokenizer.ggml.tokens has " +
                                       std::to_string(tokens->count) + " tokens (1 to " +
                                       std::to_string(kMaxTokens) + " expected)");
    const uint64_t n = tokens->count;
    vocab->tokens.reserve(size_t(n));
    gguf_for_each_string(*tokens, [&](std::string_view s) { vocab->tokens.emplace_back(s); });

    if (const GgufValue* scores = gguf_array(f, "tokenizer.ggml.scores", true)) {
        if (scores->count != n)
            fail(ErrorCode::BadFormat, where + "tokenizer.ggml.scores has " +
                                           std::to_string(scores->count) + " entries for " +
                                           std::to_string(n) + " tokens");
        vocab->scores.resize(size_t(n));
        for (uint64_t i = 0; i < n; ++i) vocab->scores[i] = float(gguf_array_number(*scores, i));
    }
    if (const GgufValue* types = gguf_array(f, "tokenizer.ggml.token_type", true)) {
        if (types->count != n)
            fail(ErrorCode::BadFormat, where + "tokenizer.ggml.token_type has " +
                                           std::to_string(types->count) + " entries for " +
                                           std::to_string(n) + " tokens");
        vocab->token_types.resize(size_t(n));
        for (uint64_t i = 0; i < n; ++i) {
            const double t = gguf_array_number(*types, i);
            if (!(t >= 0 && t <= 6))
                fail(ErrorCode::BadFormat, where + "tokenizer.ggml.token_type of token " +
                                               std::to_string(i) + " is " + number_text(t) +
                                               " (0 to 6 expected)");
            vocab->token_types[i] = int32_t(t);
        }
    }
    auto token_id = [&](const char* key, int32_t fallback) {
        const std::optional<int64_t> id = gguf_int(f, key);
        if (!id) return fallback < int64_t(n) ? fallback : -1;
        if (*id < 0 || *id >= int64_t(n))
            fail(ErrorCode::BadFormat, where + key + " = " + std::to_string(*id) +
                                           " is not a token id (vocabulary of " + std::to_string(n) +
                                           ")");
        return int32_t(*id);
    };
    if (bpe) {
        const GgufValue* merges = gguf_array(f, "tokenizer.ggml.merges", false);
        if (!merges) fail(ErrorCode::BadFormat, where + "a gpt2 vocabulary needs tokenizer.ggml.merges");
        if (merges->count > 4 * kMaxTokens)
            fail(ErrorCode::BadFormat, where + "tokenizer.ggml.merges has " +
                                           std::to_string(merges->count) + " entries (at most " +
                                           std::to_string(4 * kMaxTokens) + ")");
        vocab->merges.reserve(size_t(merges->count));
        gguf_for_each_string(*merges, [&](std::string_view s) { vocab->merges.emplace_back(s); });
    }
    // SentencePiece vocabularies put <unk> <s> </s> first; a BPE one names its ids or has none.
    vocab->bos_id = token_id("tokenizer.ggml.bos_token_id", bpe ? -1 : 1);
    vocab->eos_id = token_id("tokenizer.ggml.eos_token_id", bpe ? -1 : 2);
    vocab->unk_id = token_id("tokenizer.ggml.unknown_token_id", bpe ? -1 : 0);
    for (const char* key : {"tokenizer.ggml.eot_token_id", "tokenizer.ggml.eom_token_id"})
        if (const int32_t id = token_id(key, -1); id >= 0) vocab->eog_ids.push_back(id);
    vocab->add_bos = gguf_bool(f, "tokenizer.ggml.add_bos_token").value_or(true);
    return vocab;
}

int config_int(const GgufFile& f, const char* key, std::optional<int64_t> fallback = {}) {
    std::optional<int64_t> v = gguf_int(f, key);
    if (!v) v = fallback;
    if (!v) fail(ErrorCode::BadFormat, f.path + ": GGUF metadata lacks " + key);
    if (*v < 0 || *v > INT_MAX)
        fail(ErrorCode::BadFormat, f.path + ": metadata " + key + " = " + std::to_string(*v) +
                                       " is out of range");
    return int(*v);
}

ModelConfig config_of(const GgufFile& f,
                      const std::unordered_map<std::string_view, const GgufTensorInfo*>& tensors) {
    const std::optional<std::string_view> arch = gguf_string(f, "general.architecture");
    if (!arch) fail(ErrorCode::BadFormat, f.path + ": GGUF metadata lacks general.architecture");
    if (*arch != "llama")
        fail(ErrorCode::Unsupported, f.path + ": architecture '" + gguf_printable(*arch) +
                                         "' is not supported (only 'llama')");
    ModelConfig c;
    c.dim = config_int(f, "llama.embedding_length");
    c.hidden_dim = config_int(f, "llama.feed_forward_length");
    c.n_layers = config_int(f, "llama.block_count");
    c.n_heads = config_int(f, "llama.attention.head_count");
    c.n_kv_heads = config_int(f, "llama.attention.head_count_kv", c.n_heads);
    c.seq_len = config_int(f, "llama.context_length");
    c.rope_theta = float(gguf_float(f, "llama.rope.freq_base").value_or(10000.0));
    c.norm_eps = float(gguf_float(f, "llama.attention.layer_norm_rms_epsilon").value_or(1e-5));
    // The vocabulary size is the embedding's row count (ne[1]).
    const auto embd = tensors.find("token_embd.weight");
    if (embd == tensors.end()) fail(ErrorCode::BadFormat, f.path + ": GGUF file lacks tensor token_embd.weight");
    c.vocab_size = embd->second->ne[1] > INT_MAX ? INT_MAX : int(embd->second->ne[1]);
    validate_config(c, f.path + " (GGUF llama.* metadata)");
    // Before anything is sized by n_layers: the file must hold that many layers' tensors.
    if (f.tensors.size() < 9 * size_t(c.n_layers) + 2)
        fail(ErrorCode::BadFormat, f.path + ": GGUF file has " + std::to_string(f.tensors.size()) +
                                       " tensors, too few for " + std::to_string(c.n_layers) +
                                       " layers (llama.block_count)");
    if (const std::optional<int64_t> rot = gguf_int(f, "llama.rope.dimension_count"))
        if (*rot != c.head_dim())
            fail(ErrorCode::Unsupported, f.path + ": llama.rope.dimension_count " +
                                             std::to_string(*rot) + " differs from the head dimension " +
                                             std::to_string(c.head_dim()) +
                                             " (partial rotary embeddings are not supported)");
    return c;
}

// Points slot.view at the tensor's data, after checking its shape (ne[0] = cols, ne[1] = rows).
void bind(const GgufFile& f, const GgufTensorInfo& t, const TensorSlot& slot, const uint8_t* base) {
    const bool shape_ok = t.ne[0] == slot.cols && t.ne[1] == slot.rows && t.ne[2] == 1 &&
                          t.ne[3] == 1 && (slot.is_norm() ? t.n_dims <= 2 : t.n_dims == 2);
    if (!shape_ok) {
        std::string shape;
        for (uint32_t d = 0; d < t.n_dims; ++d) shape += (d ? ", " : "") + std::to_string(t.ne[d]);
        fail(ErrorCode::BadFormat, f.path + ": GGUF tensor " + slot.name + " has shape [" + shape +
                                       "], expected [" + std::to_string(slot.cols) +
                                       (slot.is_norm() ? "" : ", " + std::to_string(slot.rows)) +
                                       "] from the model's hyper-parameters");
    }
    const WeightType& type = *weight_type_by_ggml_id(t.type);  // parse_gguf refused every other type
    const DType dtype = type.dtype;
    const uint8_t* data = base + f.data_offset + t.offset;
    // Plain floats are read as their own width, blocks through their 2-byte f16 scales.
    const uintptr_t alignment = type.quantized() ? 2 : uintptr_t(type.block_bytes);
    if (reinterpret_cast<uintptr_t>(data) % alignment != 0)
        fail(ErrorCode::BadFormat, f.path + ": GGUF tensor " + slot.name +
                                       " data is not aligned to its element size");
    *slot.view = TensorView{slot.name, dtype, slot.rows, slot.cols, data};
}

// Llama 3.1's scaling from rope_freqs.weight (one F32 divisor per rotary pair), checked against
// the formula every backend computes, so the backends need no table of their own.
RopeScaling rope_scaling_of(const GgufFile& f, const GgufTensorInfo& t, const ModelConfig& c, const uint8_t* base) {
    const int pairs = c.head_dim() / 2;
    if (t.type != 0 || t.n_dims != 1 || t.ne[0] != pairs)
        fail(ErrorCode::BadFormat, f.path + ": tensor rope_freqs.weight should be " + std::to_string(pairs) +
                                       " F32 values (one per rotary pair), not type " + std::to_string(t.type) +
                                       " with " + std::to_string(t.ne[0]) + " in " + std::to_string(t.n_dims) + " dimensions");
    const uint8_t* data = base + f.data_offset + t.offset;
    std::vector<float> factors(static_cast<size_t>(pairs));
    std::memcpy(factors.data(), data, factors.size() * sizeof(float));
    for (size_t i = 0; i < factors.size(); ++i)
        if (!std::isfinite(factors[i]) || factors[i] <= 0.0f)
            fail(ErrorCode::BadFormat, f.path + ": rope_freqs.weight[" + std::to_string(i) + "] = " +
                                           number_text(factors[i]) + " is not a positive number");
    const int original = config_int(f, "llama.rope.scaling.original_context_length", 8192);
    std::string mismatch;
    const std::optional<RopeScaling> s = rope_scaling_of_factors(factors, c.head_dim(), c.rope_theta, original, &mismatch);
    if (!s) fail(ErrorCode::Unsupported, f.path + ": rope_freqs.weight is not Llama 3.1's scaling: " + mismatch);
    return *s;
}

}  // namespace

std::shared_ptr<EmbeddedVocab> read_gguf_vocabulary(const std::string& path) {
    const MappedFile file(path);
    std::shared_ptr<EmbeddedVocab> vocab =
        vocabulary_of(parse_gguf(file.data(), file.size(), path, false));
    if (!vocab)
        fail(ErrorCode::TokenizerMismatch, path + " holds no vocabulary (no tokenizer.ggml.tokens)");
    return vocab;
}

Checkpoint read_gguf_checkpoint(std::shared_ptr<const MappedFile> file, bool with_vocabulary) {
    const GgufFile f = parse_gguf(file->data(), file->size(), file->path(), true);
    if (f.tensors.empty())
        fail(ErrorCode::BadFormat, f.path + " holds no tensors (a vocabulary-only GGUF can be given "
                                            "as the tokenizer, not as the model)");
    std::unordered_map<std::string_view, const GgufTensorInfo*> by_name;
    for (const GgufTensorInfo& t : f.tensors) by_name[t.name] = &t;

    Checkpoint ckpt;
    ckpt.path = file->path();
    ckpt.format = "gguf";
    ckpt.config = config_of(f, by_name);
    if (const auto it = by_name.find("rope_freqs.weight"); it != by_name.end())
        ckpt.config.rope_scaling = rope_scaling_of(f, *it->second, ckpt.config, file->data());
    const bool tied = by_name.count("output.weight") == 0;
    auto storage = std::make_shared<CheckpointStorage>();
    for (const TensorSlot& slot : tensor_slots(ckpt.config, ckpt.weights, !tied)) {
        const auto it = by_name.find(slot.name);
        if (it == by_name.end())
            fail(ErrorCode::BadFormat, f.path + ": GGUF file lacks tensor " + slot.name);
        bind(f, *it->second, slot, file->data());
        if (slot.is_norm()) *slot.view = storage->as_f32(*slot.view);
    }
    if (tied) ckpt.weights.output = ckpt.weights.token_embedding;
    if (const std::optional<int64_t> ftype = gguf_int(f, "general.file_type"))
        if (const char* label = ftype >= 0 ? ggml_file_type_name(uint32_t(*ftype)) : nullptr) ckpt.file_type = label;
    if (std::shared_ptr<EmbeddedVocab> vocab = with_vocabulary ? vocabulary_of(f) : nullptr) {
        if (vocab->tokens.size() > size_t(ckpt.config.vocab_size))
            fail(ErrorCode::BadFormat, f.path + ": the vocabulary has " +
                                           std::to_string(vocab->tokens.size()) +
                                           " tokens but token_embd.weight has only " +
                                           std::to_string(ckpt.config.vocab_size) + " rows");
        ckpt.tokenizer.embedded = std::move(vocab);
    }
    ckpt.chat_template = std::string(gguf_string(f, "tokenizer.chat_template").value_or(""));
    ckpt.name = std::string(gguf_string(f, "general.name").value_or(""));
    // Everything but an untied token embedding, which is read a row per token rather than streamed:
    // it stays mapped, and rows never used never take memory (a Llama 3 vocabulary's is 290 MB in
    // Q4_K). storage keeps the file alive as long as the checkpoint.
    const uint64_t embedding_from = tied ? 0 : uint64_t(static_cast<const uint8_t*>(ckpt.weights.token_embedding.data) - file->data());
    const uint64_t embedding_to = tied ? 0 : embedding_from + uint64_t(ckpt.weights.token_embedding.n_bytes());
    ckpt.move_to_memory = [mapped = file.get(), embedding_from, embedding_to](std::span<const TensorView> copied) {
        std::vector<std::pair<uint64_t, uint64_t>> stay{{embedding_from, embedding_to}};  // byte ranges
        for (const TensorView& t : copied) {
            const auto* at = static_cast<const uint8_t*>(t.data);
            if (at < mapped->data() || at >= mapped->data() + mapped->size()) continue;  // another file's
            const auto from = uint64_t(at - mapped->data());
            stay.emplace_back(from, from + uint64_t(t.n_bytes()));
        }
        std::sort(stay.begin(), stay.end());
        uint64_t at = 0;
        for (const auto& [from, to] : stay) {
            if (from > at) mapped->move_to_memory(at, from);
            at = std::max(at, to);
        }
        mapped->move_to_memory(at, mapped->size());
    };
    ckpt.release_pages = [mapped = file.get()](const TensorView& t) { mapped->release(t.data, uint64_t(t.n_bytes())); };
    storage->files.push_back(std::move(file));
    ckpt.storage = std::move(storage);
    return ckpt;
}

}  // namespace llamadesk
