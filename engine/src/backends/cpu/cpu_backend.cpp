#include "backends/cpu/cpu_backend.h"

#include <algorithm>
#include <cstring>


#include "backends/cpu/matmul.h"
#include "core/cpu_features.h"
#include "core/cpu_threads.h"
#include "core/error.h"
#include "core/host_memory.h"
#include "model/tensor_slots.h"
#include "model/weight_types.h"

namespace llamadesk {

namespace cpu {

namespace {

// Tokens per forward_chunk(); the activation buffers hold this many rows.
constexpr int kChunkTokens = 256;

std::vector<float> to_f32(const TensorView& t) {
    std::vector<float> out(size_t(t.n_elements()));
    for (int64_t r = 0; r < t.rows; ++r) t.row_to_f32(r, out.data() + r * t.cols);
    return out;
}

void check_shape(const TensorView& t, int64_t rows, int64_t cols) {
    if (t.data == nullptr || t.rows != rows || t.cols != cols)
        fail(ErrorCode::BadFormat, "tensor " + t.name + " has shape (" + std::to_string(t.rows) + ", " +
                                       std::to_string(t.cols) + "), the model needs (" + std::to_string(rows) +
                                       ", " + std::to_string(cols) + ")");
}

void check_weights(const ModelConfig& c, const ModelWeights& w) {
    if (int(w.layers.size()) != c.n_layers)
        fail(ErrorCode::BadFormat, "checkpoint has " + std::to_string(w.layers.size()) + " layers, config says " +
                                       std::to_string(c.n_layers));
    // forward_chunk sizes the query and attention rows by dim, so wq and wo must be (dim, dim).
    if (int64_t(c.n_heads) * c.head_dim() != c.dim)
        fail(ErrorCode::BadFormat, "n_heads (" + std::to_string(c.n_heads) + ") does not divide dim (" +
                                       std::to_string(c.dim) + ")");
    for (const ConstTensorSlot& s : tensor_slots(c, w, true)) check_shape(*s.view, s.rows, s.cols);
}

}  // namespace

CpuBackend::CpuBackend(const Checkpoint& ckpt, const CpuBackendOptions& opts, const Kernels& kernels)
    : Backend(ckpt.config, kChunkTokens, opts.kv_dtype, BackendKind::Cpu), weights_(ckpt.weights), storage_(ckpt.storage),
      kernels_(kernels),
      pool_(compute_threads(opts.n_threads)), attention_(model_config(), pool_.size()),
      rope_(model_config().head_dim(), model_config().rope()) {
    const ModelConfig& c = model_config();
    check_weights(c, weights_);
    interleave_weights(ckpt);
    for (const LayerWeights& l : weights_.layers) norms_.push_back({to_f32(l.attention_norm), to_f32(l.ffn_norm)});
    final_norm_ = to_f32(weights_.final_norm);

    const size_t b = size_t(chunk_tokens());
    x_.resize(b * c.dim);
    xb_.resize(b * c.dim);
    q_.resize(b * c.dim);
    k_.resize(b * c.kv_dim());
    v_.resize(b * c.kv_dim());
    att_.resize(b * c.dim);
    hb_.resize(b * c.hidden_dim);
    hb2_.resize(b * c.hidden_dim);
}

void CpuBackend::interleave_weights(const Checkpoint& ckpt) {
    const int group = kernels_.interleave_rows;
    auto interleave = [&](TensorView& w) {
        const InterleavedKernels& kernels = kernels_.interleaved[int(w.dtype)];
        if (!kernels.interleave || w.rows % group != 0 || w.interleaved_rows) return;
        if (available_memory_bytes() < w.n_bytes() + (int64_t(1) << 30)) return;
        MappedMemory copy(size_t(w.n_bytes()));
        if (!copy.data()) return;
        const int64_t ldw = w.row_bytes();
        pool_.parallel_for(w.rows / group, [&](int64_t g, int) {
            kernels.interleave(w.row(g * group), ldw, w.cols, copy.data() + g * group * ldw);
        });
        copied_.push_back(w);
        if (ckpt.release_pages) ckpt.release_pages(w);
        w.data = copy.data();
        w.interleaved_rows = group;
        copies_.push_back(std::move(copy));
    };
    for (LayerWeights& l : weights_.layers)
        for (TensorView* w : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w1, &l.w2, &l.w3}) interleave(*w);
    // a tied classifier is also the embedding table, whose lookups then read rows back from the
    // groups (embed)
    const bool tied = weights_.classifier_tied();
    interleave(weights_.output);
    if (tied) weights_.token_embedding = weights_.output;
}

std::string CpuBackend::device_description() const {
    const int threads = pool_.size();
    std::string text = "CPU, " + std::to_string(threads) + (threads == 1 ? " thread, " : " threads, ") + kernels_.isa + " kernels";
    // a CPU with AMX that the kernel would not let us use: say why prefill is slower than it could be
    if (cpu_features().amx_int8 && amx_refusal()) text += " (AMX unused: " + std::string(amx_refusal()) + ")";
    return text;
}

void CpuBackend::allocate_kv_storage(const KvLayout& layout, int n_blocks) {
    const int64_t bytes = weight_type(kv_dtype()).bytes(layout.block_elements()) * n_blocks;
    auto out_of_memory = [&](const std::string& why) {
        fail(ErrorCode::OutOfMemory, "cannot allocate the KV cache of " + std::to_string(n_blocks) + " blocks (" +
                                         std::to_string(bytes) + " bytes): " + why);
    };
    // Asking for more than the machine has cannot succeed; refuse before trying (an allocator may
    // otherwise overcommit, or abort under a sanitizer).
    if (bytes > physical_memory_bytes()) out_of_memory("more than the machine's memory");
    MappedMemory pool(size_t(std::max<int64_t>(bytes, 1)));
    if (!pool.data()) out_of_memory("the system refused the mapping");
    kv_pool_ = std::move(pool);
}

void CpuBackend::copy_kv_block_out(int32_t block, std::byte* out) const {
    const int64_t bytes = kv_bytes_per_block(kv_layout());
    std::memcpy(out, kv_pool_.data() + block * bytes, size_t(bytes));
}

void CpuBackend::copy_kv_block_in(int32_t block, const std::byte* in) {
    const int64_t bytes = kv_bytes_per_block(kv_layout());
    std::memcpy(kv_pool_.data() + block * bytes, in, size_t(bytes));
}

void CpuBackend::forward_chunk(std::span<const int32_t> tokens, int start_pos, BlockTableView table,
                               float* logits, bool all_logits) {
    const Segment whole{0, int(tokens.size()), start_pos, table};
    forward_segments(tokens, {&whole, 1}, logits, all_logits);
}

void CpuBackend::decode_batch_chunk(std::span<const BatchToken> batch, float* logits) {
    std::vector<int32_t> tokens;
    std::vector<Segment> segments;
    for (const BatchToken& t : batch) {
        segments.push_back({int(tokens.size()), 1, t.pos, t.table});
        tokens.push_back(t.token);
    }
    forward_segments(tokens, segments, logits, true);
}

// One batch of n tokens through the model, as in llama2.c's forward() and Meta's model.py:
// h = x + attention(norm(x)); out = h + ffn(norm(h)).
void CpuBackend::forward_segments(std::span<const int32_t> tokens, std::span<const Segment> segments, float* logits,
                                  bool all_logits) {
    const ModelConfig& c = model_config();
    const KvStorage kv{kv_pool_.data(), kv_dtype(), kv_layout()};
    const int n = int(tokens.size());
    const int dim = c.dim, kv_dim = c.kv_dim(), hidden = c.hidden_dim;

    embed(kernels_, weights_.token_embedding, tokens, x_.data());
    for (const Segment& s : segments) rope_.cover(s.start_pos + s.n);
    for (int l = 0; l < c.n_layers; ++l) {
        const LayerWeights& w = weights_.layers[size_t(l)];
        rmsnorm(pool_, kernels_, x_.data(), norms_[size_t(l)].attention.data(), n, dim, c.norm_eps, xb_.data());
        const Matmul qkv[] = {{xb_.data(), dim, &w.wq, q_.data(), dim},
                              {xb_.data(), dim, &w.wk, k_.data(), kv_dim},
                              {xb_.data(), dim, &w.wv, v_.data(), kv_dim}};
        matmuls(pool_, kernels_, n, qkv);
        for (const Segment& s : segments) {
            float* q = q_.data() + int64_t(s.row) * dim;
            float* k = k_.data() + int64_t(s.row) * kv_dim;
            rope_.apply(q, s.n, c.n_heads, s.start_pos);
            rope_.apply(k, s.n, c.n_kv_heads, s.start_pos);
            store_kv(kernels_, kv, l, k, v_.data() + int64_t(s.row) * kv_dim, s.n, s.start_pos, s.table);
            attention_.run(pool_, kernels_, l, q, s.n, s.start_pos, kv, s.table, att_.data() + int64_t(s.row) * dim);
        }
        matmul(pool_, kernels_, n, {att_.data(), dim, &w.wo, xb_.data(), dim});
        add_in_place(x_.data(), xb_.data(), int64_t(n) * dim);

        rmsnorm(pool_, kernels_, x_.data(), norms_[size_t(l)].ffn.data(), n, dim, c.norm_eps, xb_.data());
        const Matmul gate_up[] = {{xb_.data(), dim, &w.w1, hb_.data(), hidden},
                                  {xb_.data(), dim, &w.w3, hb2_.data(), hidden}};
        matmuls(pool_, kernels_, n, gate_up);
        swiglu(pool_, kernels_, hb_.data(), hb2_.data(), n, hidden);
        matmul(pool_, kernels_, n, {hb_.data(), hidden, &w.w2, xb_.data(), dim});
        add_in_place(x_.data(), xb_.data(), int64_t(n) * dim);
    }
    if (!logits) return;  // an earlier chunk of a prompt whose last token's logits are wanted

    // The rows whose logits are wanted, gathered at the front of xb_.
    int rows = 0;
    for (const Segment& s : segments)
        for (int r = all_logits ? s.row : s.row + s.n - 1; r < s.row + s.n; ++r, ++rows)
            std::copy_n(x_.data() + int64_t(r) * dim, dim, xb_.data() + int64_t(rows) * dim);
    rmsnorm(pool_, kernels_, xb_.data(), final_norm_.data(), rows, dim, c.norm_eps, xb_.data());
    matmul(pool_, kernels_, rows, {xb_.data(), dim, &weights_.output, logits, c.vocab_size});
}

}  // namespace cpu

std::unique_ptr<Backend> make_cpu_backend(const Checkpoint& ckpt, const CpuBackendOptions& opts) {
    auto backend = std::make_unique<cpu::CpuBackend>(ckpt, opts);
    // decode streams faster from anonymous pages; the backend's own copies are there already
    if (ckpt.move_to_memory) ckpt.move_to_memory(backend->copied_weights());
    return backend;
}

}  // namespace llamadesk
