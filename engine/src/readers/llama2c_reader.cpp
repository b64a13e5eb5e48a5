#include "readers/llama2c_reader.h"

#include <climits>
#include <unordered_map>

#include "core/error.h"
#include "model/tensor_slots.h"
#include "readers/byte_cursor.h"
#include "readers/checkpoint_storage.h"
#include "readers/mapped_file.h"

namespace llamadesk {

namespace {

constexpr uint32_t kMagic = 0x616b3432;  // "ak42"
constexpr uint64_t kVersionedHeaderBytes = 256;

struct Header {
    ModelConfig config;
    bool shared_classifier = true;
    int version = 0;                // 0: legacy header
    uint64_t weights_offset = 0;
};

Header read_header(const MappedFile& file) {
    ByteCursor in(file.data(), file.size(), file.path());
    Header h;
    int32_t p[7];
    if (file.size() >= 4 && in.read<uint32_t>("magic") == kMagic) {
        h.version = in.read<int32_t>("version");
        if (h.version == 2)
            fail(ErrorCode::Unsupported, file.path() + ": int8-quantized llama2.c export (version 2) "
                                                       "is not supported; export with --version 1");
        if (h.version != 1)
            fail(ErrorCode::Unsupported, file.path() + ": llama2.c export version " +
                                             std::to_string(h.version) + " is not supported (1 is)");
        for (int32_t& v : p) v = in.read<int32_t>("header");
        h.shared_classifier = in.read<uint8_t>("shared classifier flag") != 0;
        in.require(kVersionedHeaderBytes - in.offset(), "header padding");
        h.weights_offset = kVersionedHeaderBytes;
    } else {
        in = ByteCursor(file.data(), file.size(), file.path());
        for (int32_t& v : p) v = in.read<int32_t>("llama2.c header");
        // A negative vocab_size means the classifier is stored separately.
        h.shared_classifier = p[5] > 0;
        if (p[5] < 0 && p[5] != INT_MIN) p[5] = -p[5];  // INT_MIN stays, for validate_config
        h.weights_offset = in.offset();
    }
    ModelConfig& c = h.config;
    c.dim = p[0];
    c.hidden_dim = p[1];
    c.n_layers = p[2];
    c.n_heads = p[3];
    c.n_kv_heads = p[4];
    c.vocab_size = p[5];
    c.seq_len = p[6];
    validate_config(c, file.path() + " (llama2.c header)");
    return h;
}

// The file size the header implies. The config's bounds keep every term far below 2^63.
uint64_t expected_file_size(const Header& h) {
    const ModelConfig& c = h.config;
    const uint64_t dim = uint64_t(c.dim), q_dim = uint64_t(c.n_heads) * uint64_t(c.head_dim()),
                   kv_dim = uint64_t(c.kv_dim()), hidden = uint64_t(c.hidden_dim);
    const uint64_t per_layer = 2 * dim + 2 * dim * q_dim + 2 * dim * kv_dim + 3 * dim * hidden;
    uint64_t floats = uint64_t(c.vocab_size) * dim * (h.shared_classifier ? 1 : 2) +
                      uint64_t(c.n_layers) * per_layer + dim;
    if (h.version == 0) floats += uint64_t(c.seq_len) * uint64_t(c.head_dim());  // freq_cis
    return h.weights_offset + floats * sizeof(float);
}

}  // namespace

std::vector<std::string> llama2c_file_order(int version, bool shared_classifier) {
    std::vector<std::string> order;
    if (version == 0)  // run.c's memory_map_weights
        order = {"token_embd.weight", "attn_norm", "attn_q", "attn_k", "attn_v", "attn_output",
                 "ffn_norm", "ffn_gate", "ffn_down", "ffn_up", "output_norm.weight", "freq_cis"};
    else  // export.py's version1_export
        order = {"attn_norm", "ffn_norm", "output_norm.weight", "token_embd.weight", "attn_q",
                 "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_down", "ffn_up"};
    if (!shared_classifier) order.push_back("output.weight");
    return order;
}

bool looks_like_llama2c(const MappedFile& file) {
    try {
        return expected_file_size(read_header(file)) == file.size();
    } catch (const EngineError&) {
        return false;
    }
}

Checkpoint read_llama2c_checkpoint(std::shared_ptr<const MappedFile> file) {
    const Header h = read_header(*file);
    // Checked before anything is sized by the header's numbers.
    const uint64_t expected = expected_file_size(h);
    if (expected != file->size())
        fail(ErrorCode::BadFormat,
             file->path() + ": a llama2.c checkpoint with this header (dim " +
                 std::to_string(h.config.dim) + ", hidden_dim " + std::to_string(h.config.hidden_dim) +
                 ", " + std::to_string(h.config.n_layers) + " layers, vocab " +
                 std::to_string(h.config.vocab_size) + ", seq_len " + std::to_string(h.config.seq_len) +
                 (h.shared_classifier ? ", shared classifier" : ", separate classifier") +
                 ") is " + std::to_string(expected) + " bytes, but the file is " +
                 std::to_string(file->size()) + " bytes (truncated, or not a llama2.c checkpoint)");
    Checkpoint ckpt;
    ckpt.path = file->path();
    ckpt.format = "llama2c";
    ckpt.config = h.config;

    std::unordered_map<std::string, const TensorSlot*> by_name;
    const std::vector<TensorSlot> slots = tensor_slots(h.config, ckpt.weights, !h.shared_classifier);
    for (const TensorSlot& s : slots) by_name[s.name] = &s;

    // Offsets first, then the pointers.
    std::vector<std::pair<const TensorSlot*, uint64_t>> placed;
    uint64_t offset = h.weights_offset;
    auto place = [&](const std::string& name) {
        const TensorSlot* s = by_name.at(name);
        placed.emplace_back(s, offset);
        offset += uint64_t(s->rows * s->cols) * sizeof(float);
    };
    for (const std::string& group : llama2c_file_order(h.version, h.shared_classifier)) {
        if (group == "freq_cis")
            offset += uint64_t(h.config.seq_len) * uint64_t(h.config.head_dim()) * sizeof(float);
        else if (group.find('.') != std::string::npos)
            place(group);
        else
            for (int l = 0; l < h.config.n_layers; ++l) place(layer_tensor_name(l, group.c_str()));
    }
    if (offset != expected)
        fail(ErrorCode::Internal, file->path() + ": llama2.c layout and size computation disagree");
    for (const auto& [s, at] : placed)
        *s->view = TensorView{s->name, DType::F32, s->rows, s->cols, file->data() + at};
    if (h.shared_classifier) ckpt.weights.output = ckpt.weights.token_embedding;

    auto storage = std::make_shared<CheckpointStorage>();
    storage->files.push_back(std::move(file));
    ckpt.storage = std::move(storage);
    return ckpt;
}

}  // namespace llamadesk
