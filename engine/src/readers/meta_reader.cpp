#include "readers/meta_reader.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "core/error.h"
#include "model/tensor_slots.h"
#include "readers/checkpoint_storage.h"
#include "readers/json.h"
#include "readers/mapped_file.h"
#include "readers/torch_pickle.h"
#include "readers/zip_archive.h"

namespace fs = std::filesystem;

namespace llamadesk {

namespace {

constexpr int kMaxShards = 64;

std::string shard_name(int k) {
    char name[32];
    std::snprintf(name, sizeof name, "consolidated.%02d.pth", k);
    return name;
}

std::string read_params_file(const fs::path& path) {
    std::error_code ec;
    if (fs::file_size(path, ec) > (1 << 20)) fail(ErrorCode::BadFormat, path.string() + " is too large for a params.json");
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

}  // namespace

MetaParams parse_meta_params(const std::string& text, const std::string& where) {
    const JsonValue root = parse_json(text, where);
    if (!root.is_object()) fail(ErrorCode::BadFormat, where + " is not a JSON object");
    auto number = [&](const char* key, bool required, double fallback) {
        const JsonValue* v = root.find(key);
        if (v == nullptr || v->kind == JsonValue::Kind::Null) {
            if (required) fail(ErrorCode::BadFormat, where + " lacks \"" + key + "\"");
            return fallback;
        }
        if (v->kind != JsonValue::Kind::Number)
            fail(ErrorCode::BadFormat, where + ": \"" + key + "\" is " + json_kind_name(v->kind) + ", expected a number");
        return v->number;
    };
    auto whole = [&](const char* key, bool required, int fallback) {
        const double v = number(key, required, fallback);
        if (v != std::floor(v) || v < -1 || v > double(1 << 30))
            fail(ErrorCode::BadFormat, where + ": \"" + key + "\" is " + std::to_string(v) + ", expected a whole number");
        return int(v);
    };
    MetaParams p;
    ModelConfig& c = p.config;
    c.dim = whole("dim", true, 0);
    c.n_layers = whole("n_layers", true, 0);
    c.n_heads = whole("n_heads", true, 0);
    c.n_kv_heads = whole("n_kv_heads", false, c.n_heads);
    c.norm_eps = float(number("norm_eps", false, c.norm_eps));
    c.rope_theta = float(number("rope_theta", false, 10000.0));
    // Llama 3.1: Meta's apply_scaling, factor 8 (or rope_scaling_factor), high_freq_factor 4,
    // low_freq_factor 1, over an original context of 8192.
    if (const JsonValue* scaled = root.find("use_scaled_rope"); scaled && scaled->kind == JsonValue::Kind::Bool && scaled->boolean) {
        c.rope_scaling.factor = float(number("rope_scaling_factor", false, 8.0));
        c.rope_scaling.high_freq_factor = float(number("high_freq_factor", false, 4.0));
    }
    // Llama 2's params.json has no context length; it was trained at 4096.
    c.seq_len = whole("max_seq_len", false, 4096);
    p.multiple_of = whole("multiple_of", false, 256);
    p.ffn_dim_multiplier = number("ffn_dim_multiplier", false, 0);
    if (p.multiple_of < 1) fail(ErrorCode::BadFormat, where + ": multiple_of must be at least 1");
    if (!(p.ffn_dim_multiplier >= 0 && p.ffn_dim_multiplier < 64))
        fail(ErrorCode::BadFormat, where + ": ffn_dim_multiplier " + std::to_string(p.ffn_dim_multiplier) + " is absurd");
    const int vocab = whole("vocab_size", false, -1);
    c.vocab_size = vocab;  // -1 in Llama 2's files: the embedding table says
    return p;
}

namespace {

struct Piece {
    const PickledTensor* tensor;
    const uint8_t* data;
    int64_t rows, cols;  // the 2-D shape (norms: 1 x n)
};

// One shard's tensors by name, each checked against its storage.
struct Shard {
    std::shared_ptr<const MappedFile> file;
    std::vector<PickledTensor> tensors;
    std::unordered_map<std::string, Piece> by_name;
};

Shard read_shard(const fs::path& path, CheckpointStorage& storage) {
    Shard s;
    s.file = std::make_shared<const MappedFile>(path.string());
    const std::string where = path.string();
    const std::vector<ZipEntry> entries = read_zip_entries(s.file->data(), s.file->size(), where);
    const ZipEntry* pickle = nullptr;
    for (const ZipEntry& e : entries)
        if (e.name.size() >= 9 && e.name.compare(e.name.size() - 9, 9, "/data.pkl") == 0 &&
            e.name.find('/') == e.name.size() - 9) {
            if (pickle) fail(ErrorCode::BadFormat, where + " holds two data.pkl entries");
            pickle = &e;
        }
    if (!pickle) fail(ErrorCode::BadFormat, where + " is a zip archive without <folder>/data.pkl: not a torch.save checkpoint");
    const std::string root = pickle->name.substr(0, pickle->name.size() - 8);  // "consolidated.00/"
    std::unordered_map<std::string, const ZipEntry*> storages;
    for (const ZipEntry& e : entries) {
        if (e.name == root + "byteorder" && std::string_view(reinterpret_cast<const char*>(e.data), e.size) != "little")
            fail(ErrorCode::Unsupported, where + " was saved big-endian");
        if (e.name.rfind(root + "data/", 0) == 0) storages[e.name.substr(root.size() + 5)] = &e;
    }
    s.tensors = read_torch_state_dict(
        std::string_view(reinterpret_cast<const char*>(pickle->data), size_t(pickle->size)), where + " (data.pkl)");
    for (const PickledTensor& t : s.tensors) {
        const std::string at = where + ": tensor " + t.name.substr(0, 128);
        const auto it = storages.find(t.storage_key);
        if (it == storages.end()) fail(ErrorCode::BadFormat, at + " refers to storage " + t.storage_key.substr(0, 32) + ", which the archive lacks");
        const int64_t element = weight_type(t.dtype).block_bytes;
        if (uint64_t(t.storage_numel) > it->second->size / uint64_t(element) ||
            uint64_t(t.storage_numel) * uint64_t(element) != it->second->size)
            fail(ErrorCode::BadFormat, at + ": its storage holds " + std::to_string(it->second->size) + " bytes, the pickle says " +
                                           std::to_string(t.storage_numel) + " elements");
        if (t.shape.empty() || t.shape.size() > 2) fail(ErrorCode::BadFormat, at + " has " + std::to_string(t.shape.size()) + " dimensions");
        // Used in place, so it must be one dense row-major run inside its storage.
        int64_t expected_stride = 1, numel = 1;
        for (size_t d = t.shape.size(); d-- > 0;) {
            if (t.shape[d] < 0 || t.shape[d] > (int64_t(1) << 40)) fail(ErrorCode::BadFormat, at + " has an absurd shape");
            if (t.shape[d] > 1 && t.stride[d] != expected_stride)
                fail(ErrorCode::Unsupported, at + " is not stored densely in row-major order (a strided view)");
            expected_stride *= t.shape[d];
            numel *= t.shape[d];
        }
        if (t.storage_offset < 0 || t.storage_offset > t.storage_numel || numel > t.storage_numel - t.storage_offset)
            fail(ErrorCode::BadFormat, at + " reaches past its storage (offset " + std::to_string(t.storage_offset) + " + " +
                                           std::to_string(numel) + " elements of " + std::to_string(t.storage_numel) + ")");
        const uint8_t* data = it->second->data + t.storage_offset * element;
        if (reinterpret_cast<uintptr_t>(data) % uintptr_t(element) != 0) {  // torch aligns storages; others may not
            void* copy = storage.allocate(size_t(numel * element));
            std::memcpy(copy, data, size_t(numel * element));
            data = static_cast<const uint8_t*>(copy);
        }
        const int64_t rows = t.shape.size() == 2 ? t.shape[0] : 1, cols = t.shape.back();
        s.by_name.emplace(t.name, Piece{&t, data, rows, cols});
    }
    return s;
}

}  // namespace

MetaSplit meta_split_of(TensorRole role) {
    switch (role) {
    case TensorRole::Query: case TensorRole::Key: case TensorRole::Value:
    case TensorRole::FfnGate: case TensorRole::FfnUp: case TensorRole::Output: return MetaSplit::Rows;
    case TensorRole::AttentionOutput: case TensorRole::FfnDown: case TensorRole::TokenEmbedding: return MetaSplit::Columns;
    default: return MetaSplit::Replicated;
    }
}

int meta_ffn_width(int dim, int multiple_of, double ffn_dim_multiplier) {
    int64_t hidden = 4 * int64_t(dim);
    hidden = 2 * hidden / 3;
    if (ffn_dim_multiplier > 0) hidden = int64_t(ffn_dim_multiplier * double(hidden));
    return int(multiple_of * ((hidden + multiple_of - 1) / multiple_of));
}

bool is_meta_folder(const std::string& dir) {
    std::error_code ec;
    return fs::is_regular_file(fs::path(dir) / "params.json", ec) && fs::is_regular_file(fs::path(dir) / shard_name(0), ec);
}

Checkpoint read_meta_checkpoint(const std::string& dir) {
    const fs::path folder(dir);
    MetaParams params = parse_meta_params(read_params_file(folder / "params.json"), (folder / "params.json").string());
    auto storage = std::make_shared<CheckpointStorage>();
    std::vector<Shard> shards;
    std::error_code ec;
    for (int k = 0; fs::is_regular_file(folder / shard_name(k), ec); ++k) {
        if (k == kMaxShards) fail(ErrorCode::BadFormat, dir + " holds more than " + std::to_string(kMaxShards) + " shards");
        shards.push_back(read_shard(folder / shard_name(k), *storage));
    }
    const int n = int(shards.size());
    // Shard 0's tensors are used in place (all of them for one shard, the replicated norms for
    // several); the other shards are copied into joined matrices, and their files go after loading.
    storage->files.push_back(shards[0].file);

    // The tensors say the vocabulary and FFN widths; params.json must agree with the FFN's.
    auto piece = [&](int k, TensorRole role, int layer) -> const Piece& {
        const std::string name = tensor_name(role, layer, TensorNaming::Meta);
        const auto it = shards[size_t(k)].by_name.find(name);
        if (it == shards[size_t(k)].by_name.end()) fail(ErrorCode::BadFormat, dir + "/" + shard_name(k) + " lacks tensor " + name);
        return it->second;
    };
    ModelConfig& c = params.config;
    const int64_t vocab = piece(0, TensorRole::TokenEmbedding, -1).rows;
    if (c.vocab_size > 0 && c.vocab_size != vocab)
        fail(ErrorCode::BadFormat, dir + ": params.json says vocab_size " + std::to_string(c.vocab_size) + ", tok_embeddings has " +
                                       std::to_string(vocab) + " rows");
    c.vocab_size = int(std::min<int64_t>(vocab, int64_t(1) << 30));
    const int64_t hidden = piece(0, TensorRole::FfnGate, 0).rows * n;
    c.hidden_dim = meta_ffn_width(c.dim, params.multiple_of, params.ffn_dim_multiplier);
    if (hidden != c.hidden_dim)
        fail(ErrorCode::BadFormat, dir + ": layers.0.feed_forward.w1 is " + std::to_string(hidden) + " wide in all, but Meta's formula "
                                       "on params.json (dim " + std::to_string(c.dim) + ", multiple_of " +
                                       std::to_string(params.multiple_of) + ", ffn_dim_multiplier " +
                                       std::to_string(params.ffn_dim_multiplier) + ") gives " + std::to_string(c.hidden_dim));
    validate_config(c, dir + "/params.json");

    Checkpoint ckpt;
    ckpt.path = dir;
    ckpt.format = "meta";
    ckpt.config = c;
    const bool has_output = shards[0].by_name.count(tensor_name(TensorRole::Output, -1, TensorNaming::Meta)) > 0;
    for (const TensorSlot& slot : tensor_slots(c, ckpt.weights, has_output)) {
        const MetaSplit split = n == 1 ? MetaSplit::Replicated : meta_split_of(slot.role);
        const int64_t rows = split == MetaSplit::Rows ? slot.rows / n : slot.rows;
        const int64_t cols = split == MetaSplit::Columns ? slot.cols / n : slot.cols;
        if ((split == MetaSplit::Rows && slot.rows % n) || (split == MetaSplit::Columns && slot.cols % n))
            fail(ErrorCode::BadFormat, dir + ": " + slot.name + " does not split evenly over " + std::to_string(n) + " shards");
        std::vector<const Piece*> pieces;
        for (int k = 0; k < (split == MetaSplit::Replicated ? 1 : n); ++k) {
            const Piece& p = piece(k, slot.role, slot.layer);
            if (p.rows != rows || p.cols != cols || (pieces.size() && p.tensor->dtype != pieces[0]->tensor->dtype))
                fail(ErrorCode::BadFormat, dir + "/" + shard_name(k) + ": " + p.tensor->name.substr(0, 128) + " has shape (" +
                                               std::to_string(p.rows) + ", " + std::to_string(p.cols) + "), expected (" +
                                               std::to_string(rows) + ", " + std::to_string(cols) + ") in " +
                                               dtype_name(pieces.empty() ? p.tensor->dtype : pieces[0]->tensor->dtype));
            pieces.push_back(&p);
        }
        const DType dtype = pieces[0]->tensor->dtype;
        TensorView view{tensor_name(slot.role, slot.layer, TensorNaming::Meta), dtype, slot.rows, slot.cols, pieces[0]->data};
        if (pieces.size() > 1) {  // join the shards' pieces into one matrix
            auto* joined = static_cast<char*>(storage->allocate(size_t(view.n_bytes())));
            const int64_t piece_row = weight_type(dtype).bytes(cols);
            for (int k = 0; k < n; ++k)
                for (int64_t r = 0; r < rows; ++r) {
                    char* dst = split == MetaSplit::Rows ? joined + ((k * rows + r) * view.row_bytes())
                                                     : joined + r * view.row_bytes() + k * piece_row;
                    std::memcpy(dst, pieces[size_t(k)]->data + r * piece_row, size_t(piece_row));
                }
            // the copied pieces leave memory now, so joining never holds a model twice
            for (int k = 0; k < n; ++k) shards[size_t(k)].file->release(pieces[size_t(k)]->data, uint64_t(rows * piece_row));
            view.data = joined;
        }
        if (slot.is_norm()) view = storage->as_f32(view);
        *slot.view = view;
    }
    if (!has_output) ckpt.weights.output = ckpt.weights.token_embedding;
    ckpt.storage = std::move(storage);
    return ckpt;
}

}  // namespace llamadesk
