#include "readers/hf_reader.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "core/error.h"
#include "model/tensor_slots.h"
#include "readers/checkpoint_storage.h"
#include "readers/gguf_file.h"
#include "readers/hf_config.h"
#include "readers/json.h"
#include "readers/safetensors_file.h"

namespace fs = std::filesystem;

namespace llamadesk {

namespace {

constexpr uint64_t kMaxJsonFile = uint64_t(16) << 20;  // config.json, the shard index

std::string read_small_file(const fs::path& path) {
    std::error_code ec;
    const uint64_t size = fs::file_size(path, ec);
    if (ec) fail(ErrorCode::FileNotFound, "cannot read " + path.string() + ": " + ec.message());
    if (size > kMaxJsonFile)
        fail(ErrorCode::BadFormat, path.string() + " is " + std::to_string(size) + " bytes; a JSON file above " +
                                       std::to_string(kMaxJsonFile) + " is not a model's");
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// The shard files in the index's weight_map, each a plain file name inside the folder.
std::vector<std::string> shard_names(const fs::path& index_path) {
    const std::string where = index_path.string();
    const JsonValue index = parse_json(read_small_file(index_path), where);
    const JsonValue* map = index.is_object() ? index.find("weight_map") : nullptr;
    if (map == nullptr || !map->is_object()) fail(ErrorCode::BadFormat, where + " has no \"weight_map\" object");
    std::vector<std::string> names;
    for (const auto& [tensor, file] : map->members) {
        if (file.kind != JsonValue::Kind::String || file.string.empty() || file.string.find('/') != std::string::npos ||
            file.string.find('\\') != std::string::npos || file.string == "." || file.string == ".." ||
            fs::path(file.string).extension() != ".safetensors")
            fail(ErrorCode::BadFormat, where + ": tensor " + gguf_printable(tensor) +
                                           " is mapped to something other than a .safetensors file in this folder");
        if (std::find(names.begin(), names.end(), file.string) == names.end()) names.push_back(file.string);
    }
    return names;
}

// A copy of a Hugging Face wq or wk in Meta's rotary row order.
TensorView interleave_rotary_rows(const TensorView& t, int head_dim, CheckpointStorage& storage) {
    auto* dst = static_cast<char*>(storage.allocate(size_t(t.n_bytes())));
    const int64_t row_bytes = t.row_bytes();
    for (int64_t r = 0; r < t.rows; ++r)
        std::memcpy(dst + r * row_bytes, t.row(hf_row_of(r, head_dim)), size_t(row_bytes));
    TensorView out = t;
    out.data = dst;
    return out;
}

}  // namespace

bool is_hf_folder(const std::string& dir) {
    std::error_code ec;
    const fs::path d(dir);
    return fs::is_regular_file(d / "config.json", ec) &&
           (fs::is_regular_file(d / "model.safetensors", ec) || fs::is_regular_file(d / "model.safetensors.index.json", ec));
}

Checkpoint read_hf_checkpoint(const std::string& dir) {
    const fs::path folder(dir);
    const HfConfig hf = parse_hf_config(read_small_file(folder / "config.json"), (folder / "config.json").string());
    const fs::path index = folder / "model.safetensors.index.json";
    std::error_code ec;
    const std::vector<std::string> files =
        fs::is_regular_file(index, ec) ? shard_names(index) : std::vector<std::string>{"model.safetensors"};

    auto storage = std::make_shared<CheckpointStorage>();
    std::vector<SafetensorsFile> shards;
    std::unordered_map<std::string, const SafetensorsTensor*> by_name;
    for (const std::string& name : files) {
        shards.push_back(read_safetensors(std::make_shared<const MappedFile>((folder / name).string())));
        storage->files.push_back(shards.back().file);
    }
    for (const SafetensorsFile& s : shards)
        for (const SafetensorsTensor& t : s.tensors)
            if (!by_name.emplace(t.name, &t).second)
                fail(ErrorCode::BadFormat, dir + ": tensor " + gguf_printable(t.name) + " appears in two files");

    Checkpoint ckpt;
    ckpt.path = dir;
    ckpt.format = "huggingface";
    ckpt.config = hf.config;
    const bool has_head = by_name.count(tensor_name(TensorRole::Output, -1, TensorNaming::HuggingFace)) > 0;
    if (!has_head && !hf.tie_word_embeddings)
        fail(ErrorCode::BadFormat, dir + " lacks lm_head.weight and config.json does not tie it to the embeddings");
    for (const TensorSlot& slot : tensor_slots(ckpt.config, ckpt.weights, has_head)) {
        const std::string name = tensor_name(slot.role, slot.layer, TensorNaming::HuggingFace);
        const auto it = by_name.find(name);
        if (it == by_name.end()) fail(ErrorCode::BadFormat, dir + " lacks tensor " + name);
        const SafetensorsTensor& t = *it->second;
        const std::vector<int64_t> expected =
            slot.is_norm() ? std::vector<int64_t>{slot.cols} : std::vector<int64_t>{slot.rows, slot.cols};
        if (t.shape != expected) {
            std::string shape;
            for (const int64_t d : t.shape) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
            fail(ErrorCode::BadFormat, dir + ": tensor " + name + " has shape [" + shape + "], config.json implies [" +
                                           (slot.is_norm() ? "" : std::to_string(slot.rows) + ", ") +
                                           std::to_string(slot.cols) + "]");
        }
        TensorView view{name, t.dtype, slot.rows, slot.cols, t.data};
        if (reinterpret_cast<uintptr_t>(t.data) % uintptr_t(weight_type(t.dtype).block_bytes) != 0) {
            // safetensors pads its header so data is aligned; a file that is not gets an aligned copy
            void* copy = storage->allocate(size_t(t.n_bytes));
            std::memcpy(copy, t.data, size_t(t.n_bytes));
            view.data = copy;
        }
        if (slot.is_norm()) view = storage->as_f32(view);
        if (slot.role == TensorRole::Query || slot.role == TensorRole::Key)
            view = interleave_rotary_rows(view, ckpt.config.head_dim(), *storage);
        *slot.view = view;
    }
    if (!has_head) ckpt.weights.output = ckpt.weights.token_embedding;
    ckpt.storage = std::move(storage);
    return ckpt;
}

}  // namespace llamadesk
