// write_hf(): a Hugging Face model folder as transformers' save_pretrained writes one: config.json,
// model.safetensors (or shards and model.safetensors.index.json) with wq and wk in Hugging Face's
// rotary row order, and tokenizer.model (a byte-level vocabulary: tokenizer.json and its configs) when the
// checkpoint carries its vocabulary.
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "core/error.h"
#include "model/tensor_slots.h"
#include "readers/hf_reader.h"
#include "synthetic/file_sink.h"
#include "synthetic/synthetic_model.h"
#include "synthetic/synthetic_vocab.h"
#include "tokenizer/sentencepiece_proto.h"

namespace fs = std::filesystem;

namespace llamadesk {

namespace {

const char* safetensors_dtype(const TensorView& t) {
    switch (t.dtype) {
    case DType::F32: return "F32";
    case DType::F16: return "F16";
    case DType::BF16: return "BF16";
    default:
        fail(ErrorCode::Unsupported, "tensor " + t.name + " is " + dtype_name(t.dtype) +
                                         "; safetensors holds F32, F16 and BF16 weights");
    }
}

struct Entry {
    std::string name;  // Hugging Face's
    const ConstTensorSlot* slot;
};

// transformers' form of Llama 3.1's scaling, or null.
std::string rope_scaling_json(const RopeScaling& r) {
    if (!r.enabled()) return "null";
    std::ostringstream o;
    o << "{\"rope_type\": \"llama3\", \"factor\": " << r.factor << ", \"low_freq_factor\": " << r.low_freq_factor
      << ", \"high_freq_factor\": " << r.high_freq_factor << ", \"original_max_position_embeddings\": " << r.original_context << "}";
    return o.str();
}

std::string config_json(const ModelConfig& c, bool tied) {
    std::ostringstream j;
    j.precision(9);
    j << "{\n  \"architectures\": [\"LlamaForCausalLM\"],\n  \"model_type\": \"llama\",\n"
      << "  \"hidden_act\": \"silu\",\n  \"hidden_size\": " << c.dim << ",\n  \"intermediate_size\": " << c.hidden_dim
      << ",\n  \"num_hidden_layers\": " << c.n_layers << ",\n  \"num_attention_heads\": " << c.n_heads
      << ",\n  \"num_key_value_heads\": " << c.n_kv_heads << ",\n  \"vocab_size\": " << c.vocab_size
      << ",\n  \"max_position_embeddings\": " << c.seq_len << ",\n  \"rms_norm_eps\": " << c.norm_eps
      << ",\n  \"rope_theta\": " << c.rope_theta << ",\n  \"rope_scaling\": " << rope_scaling_json(c.rope_scaling)
      << ",\n  \"tie_word_embeddings\": "
      << (tied ? "true" : "false") << ",\n  \"torch_dtype\": \"float32\"\n}\n";
    return j.str();
}

void write_shard(const std::string& path, const std::vector<Entry>& entries, int head_dim) {
    std::string header = "{\"__metadata__\":{\"format\":\"pt\"}";
    uint64_t offset = 0;
    for (const Entry& e : entries) {
        const TensorView& t = *e.slot->view;
        header += ",\"" + e.name + "\":{\"dtype\":\"" + safetensors_dtype(t) + "\",\"shape\":[" +
                  (e.slot->is_norm() ? "" : std::to_string(t.rows) + ",") + std::to_string(t.cols) +
                  "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(offset + uint64_t(t.n_bytes())) +
                  "]}";
        offset += uint64_t(t.n_bytes());
    }
    header += "}";
    header.append((8 - header.size() % 8) % 8, ' ');  // data starts 8-byte aligned, as safetensors does
    FileSink out(path);
    out.put<uint64_t>(header.size());
    out.write(header.data(), header.size());
    for (const Entry& e : entries) {
        const TensorView& t = *e.slot->view;
        const bool rotary = e.slot->role == TensorRole::Query || e.slot->role == TensorRole::Key;
        if (!rotary) {
            out.write(t.data, size_t(t.n_bytes()));
            continue;
        }
        // Hugging Face's row h is Meta's row r where hf_row_of(r) == h
        std::vector<int64_t> meta_row(size_t(t.rows));
        for (int64_t r = 0; r < t.rows; ++r) meta_row[size_t(hf_row_of(r, head_dim))] = r;
        for (int64_t h = 0; h < t.rows; ++h) out.write(t.row(meta_row[size_t(h)]), size_t(t.row_bytes()));
    }
    out.close();
}

}  // namespace

void write_hf(const Checkpoint& ckpt, const std::string& dir, int n_shards) {
    if (n_shards < 1) fail(ErrorCode::InvalidArgument, "write_hf needs at least one shard");
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) fail(ErrorCode::InvalidArgument, "cannot create folder " + dir + ": " + ec.message());
    const bool tied = ckpt.weights.classifier_tied();
    const std::vector<ConstTensorSlot> slots = tensor_slots(ckpt.config, ckpt.weights, !tied);
    std::vector<Entry> entries;
    int64_t total = 0;
    for (const ConstTensorSlot& s : slots) {
        entries.push_back({tensor_name(s.role, s.layer, TensorNaming::HuggingFace), &s});
        total += s.view->n_bytes();
    }

    {
        FileSink config((fs::path(dir) / "config.json").string());
        const std::string text = config_json(ckpt.config, tied);
        config.write(text.data(), text.size());
        config.close();
    }
    if (ckpt.tokenizer.embedded && ckpt.tokenizer.embedded->model == "gpt2") {
        write_hf_tokenizer(*ckpt.tokenizer.embedded, dir, ckpt.chat_template);  // Llama 3: tokenizer.json
    } else if (ckpt.tokenizer.embedded) {
        FileSink tok((fs::path(dir) / "tokenizer.model").string());
        const std::string proto = serialize_model_proto(*ckpt.tokenizer.embedded);
        tok.write(proto.data(), proto.size());
        tok.close();
    }

    if (n_shards == 1) return write_shard((fs::path(dir) / "model.safetensors").string(), entries, ckpt.config.head_dim());

    // Shards of about equal bytes, in tensor order, named and indexed as save_pretrained does.
    std::string weight_map;
    size_t next = 0;
    int64_t written = 0;
    for (int k = 1; k <= n_shards; ++k) {
        char name[64];
        std::snprintf(name, sizeof name, "model-%05d-of-%05d.safetensors", k, n_shards);
        std::vector<Entry> shard;
        const int64_t until = total * k / n_shards;
        while (next < entries.size() && (written < until || k == n_shards)) {
            written += entries[next].slot->view->n_bytes();
            weight_map += std::string(weight_map.empty() ? "" : ",\n") + "    \"" + entries[next].name + "\": \"" + name + "\"";
            shard.push_back(entries[next++]);
        }
        write_shard((fs::path(dir) / name).string(), shard, ckpt.config.head_dim());
    }
    FileSink index((fs::path(dir) / "model.safetensors.index.json").string());
    const std::string text = "{\n  \"metadata\": {\"total_size\": " + std::to_string(total) + "},\n  \"weight_map\": {\n" +
                             weight_map + "\n  }\n}\n";
    index.write(text.data(), text.size());
    index.close();
}

}  // namespace llamadesk
