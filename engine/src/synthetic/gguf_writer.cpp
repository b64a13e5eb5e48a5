// write_gguf(): GGUF v3 with the llama.* and tokenizer.ggml.* keys. Metadata and tensor infos are
// assembled in memory (small); tensor data goes straight from the checkpoint to the file.
#include <cstring>

#include "core/error.h"
#include "model/rope.h"
#include "model/tensor_slots.h"
#include "readers/ggml_types.h"
#include "readers/gguf_file.h"
#include "synthetic/file_sink.h"
#include "synthetic/synthetic_model.h"

namespace llamadesk {

namespace {

constexpr uint64_t kAlignment = 32;

// Little-endian GGUF encoding of keys and values into a byte string.
class Encoder {
public:
    std::string bytes;
    uint64_t n_keys = 0;

    template <typename T>
    void raw(T v) { bytes.append(reinterpret_cast<const char*>(&v), sizeof(T)); }
    void str(std::string_view s) {
        raw<uint64_t>(s.size());
        bytes.append(s);
    }
    void key(std::string_view k, GgufType t) {
        str(k);
        raw<uint32_t>(uint32_t(t));
        ++n_keys;
    }
    void u32(std::string_view k, uint32_t v) { key(k, GgufType::UInt32); raw(v); }
    void f32(std::string_view k, float v) { key(k, GgufType::Float32); raw(v); }
    void boolean(std::string_view k, bool v) { key(k, GgufType::Bool); raw<uint8_t>(v); }
    void string(std::string_view k, std::string_view v) { key(k, GgufType::String); str(v); }
    template <typename T>
    void array(std::string_view k, GgufType elem, const std::vector<T>& values) {
        key(k, GgufType::Array);
        raw<uint32_t>(uint32_t(elem));
        raw<uint64_t>(values.size());
        for (const T& v : values) {
            if constexpr (std::is_same_v<T, std::string>) str(v);
            else raw(v);
        }
    }
};

void encode_metadata(const Checkpoint& ckpt, Encoder& kv) {
    const ModelConfig& c = ckpt.config;
    kv.string("general.architecture", "llama");
    kv.string("general.name", !ckpt.name.empty() ? ckpt.name : ckpt.format == "synthetic" ? "synthetic" : ckpt.path);
    kv.u32("general.alignment", kAlignment);
    if (const std::optional<uint32_t> file_type = ggml_file_type_id(ckpt.file_type))
        kv.u32("general.file_type", *file_type);
    kv.u32("llama.context_length", uint32_t(c.seq_len));
    kv.u32("llama.embedding_length", uint32_t(c.dim));
    kv.u32("llama.block_count", uint32_t(c.n_layers));
    kv.u32("llama.feed_forward_length", uint32_t(c.hidden_dim));
    kv.u32("llama.rope.dimension_count", uint32_t(c.head_dim()));
    kv.u32("llama.attention.head_count", uint32_t(c.n_heads));
    kv.u32("llama.attention.head_count_kv", uint32_t(c.n_kv_heads));
    kv.f32("llama.attention.layer_norm_rms_epsilon", c.norm_eps);
    kv.f32("llama.rope.freq_base", c.rope_theta);
    if (c.rope_scaling.enabled())
        kv.u32("llama.rope.scaling.original_context_length", uint32_t(c.rope_scaling.original_context));
    kv.u32("llama.vocab_size", uint32_t(c.vocab_size));
    if (const EmbeddedVocab* v = ckpt.tokenizer.embedded.get()) {
        kv.string("tokenizer.ggml.model", v->model.empty() ? "llama" : v->model);
        if (!v->pre.empty()) kv.string("tokenizer.ggml.pre", v->pre);
        kv.array("tokenizer.ggml.tokens", GgufType::String, v->tokens);
        if (!v->merges.empty()) kv.array("tokenizer.ggml.merges", GgufType::String, v->merges);
        if (!v->scores.empty()) kv.array("tokenizer.ggml.scores", GgufType::Float32, v->scores);
        if (!v->token_types.empty())
            kv.array("tokenizer.ggml.token_type", GgufType::Int32, v->token_types);
        // A byte-level vocabulary may lack <unk>; ids below zero are not written.
        if (v->bos_id >= 0) kv.u32("tokenizer.ggml.bos_token_id", uint32_t(v->bos_id));
        if (v->eos_id >= 0) kv.u32("tokenizer.ggml.eos_token_id", uint32_t(v->eos_id));
        if (v->unk_id >= 0) kv.u32("tokenizer.ggml.unknown_token_id", uint32_t(v->unk_id));
        // llama.cpp reads one end-of-turn id; the rest of the set it finds by name, as we do.
        if (!v->eog_ids.empty()) kv.u32("tokenizer.ggml.eot_token_id", uint32_t(v->eog_ids.back()));
        kv.boolean("tokenizer.ggml.add_bos_token", v->add_bos);
        kv.boolean("tokenizer.ggml.add_eos_token", false);
    }
    if (!ckpt.chat_template.empty()) kv.string("tokenizer.chat_template", ckpt.chat_template);
}

}  // namespace

void write_gguf(const Checkpoint& ckpt, const std::string& path) {
    ModelWeights weights = ckpt.weights;
    const bool tied = weights.output.data == weights.token_embedding.data;
    const std::vector<TensorSlot> slots = tensor_slots(ckpt.config, weights, !tied);

    Encoder kv;
    encode_metadata(ckpt, kv);
    // Tensor infos: GGUF lists dimensions innermost first, so (rows, cols) becomes [cols, rows].
    Encoder infos;
    uint64_t data_offset = 0;
    for (const TensorSlot& s : slots) {
        const TensorView& t = *s.view;
        infos.str(s.name);
        infos.raw<uint32_t>(s.is_norm() ? 1 : 2);
        infos.raw<uint64_t>(uint64_t(t.cols));
        if (!s.is_norm()) infos.raw<uint64_t>(uint64_t(t.rows));
        infos.raw<uint32_t>(weight_type(t.dtype).ggml_id);
        infos.raw<uint64_t>(data_offset);
        data_offset += (uint64_t(t.n_bytes()) + kAlignment - 1) / kAlignment * kAlignment;
    }
    // Llama 3.1's scaling as llama.cpp's converter writes it: one divisor per rotary pair.
    const std::vector<float> rope_freqs = ckpt.config.rope_scaling.enabled()
                                              ? rope_freq_factors(ckpt.config.head_dim(), ckpt.config.rope())
                                              : std::vector<float>();
    if (!rope_freqs.empty()) {
        infos.str("rope_freqs.weight");
        infos.raw<uint32_t>(1);
        infos.raw<uint64_t>(rope_freqs.size());
        infos.raw<uint32_t>(0);  // F32
        infos.raw<uint64_t>(data_offset);
    }

    FileSink out(path);
    out.write("GGUF", 4);
    out.put<uint32_t>(3);
    out.put<uint64_t>(slots.size() + (rope_freqs.empty() ? 0 : 1));
    out.put<uint64_t>(kv.n_keys);
    out.write(kv.bytes.data(), kv.bytes.size());
    out.write(infos.bytes.data(), infos.bytes.size());
    out.pad_to(kAlignment);
    for (const TensorSlot& s : slots) {
        out.write(s.view->data, size_t(s.view->n_bytes()));
        out.pad_to(kAlignment);
    }
    out.write(rope_freqs.data(), rope_freqs.size() * sizeof(float));
    out.close();
}

}  // namespace llamadesk
