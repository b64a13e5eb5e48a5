// write_meta(): a Meta checkpoint folder as Meta's download has it: params.json, one torch.save
// archive per model-parallel shard (a zip of stored entries: <name>/data.pkl, a protocol-2 pickle
// of the state dict, and <name>/data/<key> storages) and tokenizer.model from an embedded
// vocabulary (SentencePiece, or tiktoken's form for a byte-level one, as Llama 3 ships it). Each shard keeps all its tensors in one storage, as views at different offsets, and
// the pickle memoizes its GLOBALs as Python's pickler does, so readers meet offsets and memo
// references.
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "core/error.h"
#include "model/tensor_slots.h"
#include "readers/meta_reader.h"
#include "synthetic/file_sink.h"
#include "synthetic/zip_writer.h"
#include "synthetic/synthetic_model.h"
#include "synthetic/synthetic_vocab.h"
#include "tokenizer/sentencepiece_proto.h"

namespace fs = std::filesystem;

namespace llamadesk {

namespace {

class PickleWriter {
public:
    std::string bytes;

    void op(char c) { bytes += c; }
    void op(uint8_t c) { bytes += char(c); }
    void text(const std::string& s) {
        op('X');
        raw<uint32_t>(uint32_t(s.size()));
        bytes += s;
    }
    void integer(int64_t v) {
        if (v >= 0 && v < (int64_t(1) << 31)) {
            op('J');
            raw<int32_t>(int32_t(v));
        } else {
            op(uint8_t(0x8a));  // LONG1
            op(uint8_t(8));
            raw<int64_t>(v);
        }
    }
    // A GLOBAL written once and fetched from the memo afterwards.
    void global(const std::string& module, const std::string& name) {
        const std::string key = module + "\n" + name + "\n";
        for (size_t i = 0; i < memo_.size(); ++i)
            if (memo_[i] == key) {
                op('j');
                raw<uint32_t>(uint32_t(i));
                return;
            }
        op('c');
        bytes += key;
        op('r');
        raw<uint32_t>(uint32_t(memo_.size()));
        memo_.push_back(key);
    }
    template <typename T>
    void raw(T v) { bytes.append(reinterpret_cast<const char*>(&v), sizeof(T)); }

private:
    std::vector<std::string> memo_;
};

const char* storage_type(DType t) {
    switch (t) {
    case DType::F32: return "FloatStorage";
    case DType::F16: return "HalfStorage";
    case DType::BF16: return "BFloat16Storage";
    default: fail(ErrorCode::Unsupported, std::string("torch checkpoints hold F32, F16 and BF16 weights, not ") + dtype_name(t));
    }
}

struct ShardTensor {
    std::string name;
    DType dtype;
    std::vector<int64_t> shape;
    std::string bytes;  // this shard's part, row-major
};

std::string pickle_state_dict(const std::vector<ShardTensor>& tensors, int64_t storage_numel) {
    PickleWriter p;
    p.op(uint8_t(0x80));
    p.op(uint8_t(2));
    p.global("collections", "OrderedDict");
    p.op(')');
    p.op('R');
    p.op('(');
    int64_t offset = 0;
    for (const ShardTensor& t : tensors) {
        p.text(t.name);
        p.global("torch._utils", "_rebuild_tensor_v2");
        p.op('(');
        p.op('(');  // the persistent id of the shard's one storage
        p.text("storage");
        p.global("torch", storage_type(t.dtype));
        p.text("0");
        p.text("cpu");
        p.integer(storage_numel);
        p.op('t');
        p.op('Q');
        p.integer(offset);
        p.op('(');
        for (const int64_t d : t.shape) p.integer(d);
        p.op('t');
        p.op('(');
        int64_t stride = 1;
        std::vector<int64_t> strides(t.shape.size());
        for (size_t d = t.shape.size(); d-- > 0;) strides[d] = stride, stride *= t.shape[d];
        for (const int64_t s : strides) p.integer(s);
        p.op('t');
        p.op(uint8_t(0x89));  // requires_grad False
        p.global("collections", "OrderedDict");
        p.op(')');
        p.op('R');
        p.op('t');
        p.op('R');
        offset += int64_t(t.bytes.size()) / int64_t(weight_type(t.dtype).block_bytes);
    }
    p.op('u');
    p.op('.');
    return p.bytes;
}

}  // namespace

void write_meta(const Checkpoint& ckpt, const std::string& dir, int n_shards) {
    const ModelConfig& c = ckpt.config;
    if (n_shards < 1) fail(ErrorCode::InvalidArgument, "write_meta needs at least one shard");
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) fail(ErrorCode::InvalidArgument, "cannot create folder " + dir + ": " + ec.message());
    // Llama 3: a tiktoken tokenizer.model and the vocabulary's size in params.json
    const bool byte_level = ckpt.tokenizer.embedded && ckpt.tokenizer.embedded->model == "gpt2";
    {
        // the largest multiple_of that makes Meta's formula give hidden_dim, else a multiplier
        int multiple_of = 1;
        double multiplier = 0;
        for (const int m : {256, 128, 64, 32, 16, 8, 4, 2, 1})
            if (meta_ffn_width(c.dim, m, 0) == c.hidden_dim) {
                multiple_of = m;
                break;
            }
        if (meta_ffn_width(c.dim, multiple_of, 0) != c.hidden_dim)
            multiplier = (c.hidden_dim + 0.5) / double(2 * (4 * int64_t(c.dim)) / 3);
        std::ostringstream j;
        j.precision(17);
        j << "{\"dim\": " << c.dim << ", \"multiple_of\": " << multiple_of;
        if (multiplier > 0) j << ", \"ffn_dim_multiplier\": " << multiplier;
        j.precision(9);
        j << ", \"n_heads\": " << c.n_heads
          << ", \"n_kv_heads\": " << c.n_kv_heads << ", \"n_layers\": " << c.n_layers << ", \"norm_eps\": " << c.norm_eps
          << ", \"rope_theta\": " << c.rope_theta << ", \"max_seq_len\": " << c.seq_len << ", \"vocab_size\": " << (byte_level ? c.vocab_size : -1)
          << (c.rope_scaling.enabled() ? ", \"use_scaled_rope\": true, \"rope_scaling_factor\": " + std::to_string(c.rope_scaling.factor) : std::string())
          << "}\n";
        FileSink params((fs::path(dir) / "params.json").string());
        params.write(j.str().data(), j.str().size());
        params.close();
    }
    if (byte_level) {
        write_tiktoken(*ckpt.tokenizer.embedded, (fs::path(dir) / "tokenizer.model").string());
    } else if (ckpt.tokenizer.embedded) {
        FileSink tok((fs::path(dir) / "tokenizer.model").string());
        const std::string proto = serialize_model_proto(*ckpt.tokenizer.embedded);
        tok.write(proto.data(), proto.size());
        tok.close();
    }
    const bool tied = ckpt.weights.classifier_tied();
    for (int k = 0; k < n_shards; ++k) {
        std::vector<ShardTensor> tensors;
        std::string storage;
        DType dtype = DType::F32;
        for (const ConstTensorSlot& s : tensor_slots(c, ckpt.weights, !tied)) {
            const TensorView& t = *s.view;
            // norms are F32 in memory; a shard's one storage has one dtype, the matrices'
            const DType stored = s.is_norm() ? ckpt.weights.layers[0].wq.dtype : t.dtype;
            dtype = stored;
            const MetaSplit split = n_shards == 1 ? MetaSplit::Replicated : meta_split_of(s.role);
            const int64_t rows = split == MetaSplit::Rows ? t.rows / n_shards : t.rows;
            const int64_t cols = split == MetaSplit::Columns ? t.cols / n_shards : t.cols;
            if (rows * n_shards != t.rows && split == MetaSplit::Rows) fail(ErrorCode::InvalidArgument, t.name + " does not split");
            if (cols * n_shards != t.cols && split == MetaSplit::Columns) fail(ErrorCode::InvalidArgument, t.name + " does not split");
            ShardTensor st{tensor_name(s.role, s.layer, TensorNaming::Meta), stored,
                           s.is_norm() ? std::vector<int64_t>{cols} : std::vector<int64_t>{rows, cols}, {}};
            const WeightType& w = weight_type(stored);
            std::vector<float> row(size_t(t.cols));
            for (int64_t r = 0; r < rows; ++r) {
                const int64_t src_row = split == MetaSplit::Rows ? k * rows + r : r;
                t.row_to_f32(src_row, row.data());
                std::string bytes(size_t(w.bytes(cols)), '\0');
                w.from_f32(row.data() + (split == MetaSplit::Columns ? k * cols : 0), bytes.data(), cols);
                st.bytes += bytes;
            }
            storage += st.bytes;
            tensors.push_back(std::move(st));
        }
        const std::string name = "consolidated." + std::string(k < 10 ? "0" : "") + std::to_string(k);
        const int64_t numel = int64_t(storage.size()) / weight_type(dtype).block_bytes;
        write_stored_zip((fs::path(dir) / (name + ".pth")).string(),
                  {{name + "/data.pkl", pickle_state_dict(tensors, numel)},
                   {name + "/byteorder", "little"},
                   {name + "/data/0", storage},
                   {name + "/version", "3\n"}});
    }
}

}  // namespace llamadesk
