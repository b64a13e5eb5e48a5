#include "backends/cuda/cuda_backend.h"

#include <algorithm>

#include "backends/cuda/cuda_module.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/weight_kernels.h"
#include "core/error.h"
#include "sampling/sampler.h"

namespace llamadesk::cuda {

namespace {

// Tokens per forward_chunk(); the activation buffers hold this many rows.
constexpr int kChunkTokens = 512;

// Elements of a matrix in blocks widened to F16 at once for cuBLAS: 32 MiB of scratch, next to
// 262 MB for a widened copy of 7B's classifier, and at 7B's 4096 columns still a slab of 4096 rows,
// a GEMM large enough to keep the tensor cores busy.
constexpr int64_t kWidenElements = int64_t(16) << 20;

// Decode splits each head's positions so that n_heads * splits blocks put about 8 blocks (32
// warps) on every multiprocessor: each warp walks its positions one by one, so long contexts
// need many warps in flight to keep memory busy.

int decode_splits_for(const DeviceInfo& device, const ModelConfig& c) {
    const int want = (8 * device.n_multiprocessors + c.n_heads - 1) / c.n_heads;
    return std::clamp(want, 1, std::max(1, std::min(64, c.seq_len / 16)));
}

}  // namespace

CudaBackend::CudaBackend(const DeviceInfo& device, const CudaBackendOptions& opts,
                         std::unique_ptr<Stream> stream, DeviceModel model)
    : Backend(model.config, kChunkTokens, opts.kv_dtype, BackendKind::Cuda), device_(device), opts_(opts), stream_(std::move(stream)),
      model_(std::move(model)), gemm_(stream_->get()) {
    const ModelConfig& c = model_.config;
    if (!attention_supports_head_dim(c.head_dim()))
        fail(ErrorCode::Unsupported, "the CUDA backend does not support head_dim " +
                                         std::to_string(c.head_dim()) + "; use the CPU backend");
    decode_splits_ = decode_splits_for(device_, c);
    const size_t b = size_t(chunk_tokens()), el = size_t(weight_type(model_.activation_dtype).bytes(1));
    const size_t q_dim = size_t(c.n_heads) * c.head_dim(), kv_dim = size_t(c.kv_dim());
    x_ = DeviceBuffer(b * c.dim * sizeof(float), "activations");
    xb_ = DeviceBuffer(b * std::max<size_t>(c.dim, q_dim) * el, "activations");
    qkv_ = DeviceBuffer(b * (q_dim + 2 * kv_dim) * sizeof(float), "activations");
    att_ = DeviceBuffer(b * q_dim * el, "activations");
    gate_up_ = DeviceBuffer(b * 2 * c.hidden_dim * sizeof(float), "activations");
    hb_ = DeviceBuffer(b * c.hidden_dim * el, "activations");
    logits_ = DeviceBuffer(b * c.vocab_size * sizeof(float), "logits");
    partials_ = DeviceBuffer(std::max<size_t>(b, decode_splits_) * c.n_heads * (c.head_dim() + 2) *
                                 sizeof(float), "attention partials");
    if (const int64_t largest = model_.largest_block_part(); largest > 0)
        widened_ = DeviceBuffer(size_t(std::min(largest, kWidenElements)) * 2, "widened weights");
}

CudaBackend::~CudaBackend() { cudaStreamSynchronize(stream_->get()); }

void CudaBackend::allocate_kv_storage(const KvLayout& layout, int n_blocks) {
    const ModelConfig& c = model_.config;
    const size_t bytes = size_t(weight_type(kv_dtype()).bytes(layout.block_elements())) * size_t(n_blocks);
    // allocate the new pool first: on failure the old one stays
    DeviceBuffer pool(bytes, "the KV cache (" + std::to_string(n_blocks) + " blocks of " +
                                 std::to_string(layout.block_size) + " tokens)");
    // all-ones bytes are NaN in F16 and F32: reading a slot nothing wrote shows in the logits
    CUDA_CHECK(cudaMemsetAsync(pool.get(), 0xff, bytes, stream_->get()));
    const int max_blocks = int(layout.blocks_for(c.seq_len));
    StepInputs steps(chunk_tokens(), max_blocks, c.seq_len);
    CUDA_CHECK(cudaStreamSynchronize(stream_->get()));
    graphs_.clear();  // they captured the old pool's address
    kv_pool_ = std::move(pool);
    steps_ = std::move(steps);
}

// Synchronous on the backend's stream: a snapshot copy is rare and must see every write before it.
void CudaBackend::copy_kv_block_out(int32_t block, std::byte* out) const {
    const size_t bytes = size_t(kv_bytes_per_block(kv_layout()));
    CUDA_CHECK(cudaMemcpyAsync(out, kv_pool_.as<std::byte>() + size_t(block) * bytes, bytes, cudaMemcpyDeviceToHost,
                               stream_->get()));
    CUDA_CHECK(cudaStreamSynchronize(stream_->get()));
}

void CudaBackend::copy_kv_block_in(int32_t block, const std::byte* in) {
    const size_t bytes = size_t(kv_bytes_per_block(kv_layout()));
    CUDA_CHECK(cudaMemcpyAsync(kv_pool_.as<std::byte>() + size_t(block) * bytes, in, bytes, cudaMemcpyHostToDevice,
                               stream_->get()));
    CUDA_CHECK(cudaStreamSynchronize(stream_->get()));
}

int64_t CudaBackend::kv_memory_available() const { return memory_available(); }

void CudaBackend::stage(std::span<const int32_t> tokens, int start_pos, BlockTableView table) {
    const int n_blocks = int(kv_layout().blocks_for(int64_t(start_pos) + int64_t(tokens.size())));
    std::copy_n(table.blocks, n_blocks, steps_.block_table());
    std::copy(tokens.begin(), tokens.end(), steps_.tokens());
    steps_.start_pos() = start_pos;
}

AttentionShape CudaBackend::attention_shape(int n_tokens, int layer) const {
    const ModelConfig& c = model_.config;
    AttentionShape s;
    s.n_tokens = n_tokens;
    s.n_heads = c.n_heads;
    s.n_kv_heads = c.n_kv_heads;
    s.head_dim = c.head_dim();
    s.layer = layer;
    s.layout = kv_layout();
    s.start_pos = steps_.d_start_pos();
    s.block_table = steps_.d_block_table();
    return s;
}

void CudaBackend::matmul(const DeviceMatrix& w, const void* x, int n, float* y, bool accumulate) {
    const cudaStream_t st = stream_->get();
    const int cols = int(w.cols), ldy = int(w.rows);
    int64_t first_row = 0;
    for (const DeviceMatrix::Part& p : w.parts) {
        const WeightKernels& k = weight_kernels(p.dtype);
        const int rows = int(p.rows);
        float* yp = y + first_row;  // this part's rows of every token's output
        if (n == 1 && !opts_.decode_with_cublas) {
            k.gemv(p.data.get(), x, rows, cols, yp, accumulate, st);
        } else if (!k.to_f16) {
            gemm_.matmul(p.data.get(), x, p.dtype, rows, cols, n, yp, ldy, accumulate);
        } else {
            const int slab = int(std::max<int64_t>(1, kWidenElements / cols));
            const int64_t row_bytes = weight_type(p.dtype).bytes(cols);
            for (int r = 0; r < rows; r += slab) {
                const int m = std::min(slab, rows - r);
                k.to_f16(p.data.as<char>() + r * row_bytes, m, cols, widened_.get(), st);
                gemm_.matmul(widened_.get(), x, DType::F16, m, cols, n, yp + r, ldy, accumulate);
            }
        }
        first_row += p.rows;
    }
}

// One pass of the model over n tokens, as in Meta's model.py:
//   h = x + wo(attention(rope(wq, wk, wv (norm(x)))));  x = h + w2(silu(w1 norm(h)) * w3 norm(h))
void CudaBackend::enqueue_forward(int n, int logit_rows) {
    const ModelConfig& c = model_.config;
    const DType dt = model_.activation_dtype;
    const cudaStream_t st = stream_->get();
    float* x = x_.as<float>();

    const DeviceMatrix::Part& table = model_.token_embedding.parts.front();
    weight_kernels(table.dtype).embed(steps_.d_tokens(), n, table.data.get(), c.vocab_size, c.dim, x, st);
    for (int l = 0; l < c.n_layers; ++l) {
        const DeviceLayer& w = model_.layers[size_t(l)];
        const AttentionShape s = attention_shape(n, l);
        rmsnorm(x, w.attention_norm.as<float>(), n, c.dim, c.norm_eps, xb_.get(), dt, st);
        matmul(w.wqkv, xb_.get(), n, qkv_.as<float>(), false);
        rope_write_kv(qkv_.as<float>(), s, c.rope(), kv_pool_.get(), kv_dtype(), st);
        attention(qkv_.as<float>(), s, kv_pool_.get(), kv_dtype(), n == 1 ? decode_splits_ : 1,
                  partials_.as<float>(), att_.get(), dt, st);
        matmul(w.wo, att_.get(), n, x, true);  // x += wo att

        rmsnorm(x, w.ffn_norm.as<float>(), n, c.dim, c.norm_eps, xb_.get(), dt, st);
        matmul(w.w13, xb_.get(), n, gate_up_.as<float>(), false);
        swiglu(gate_up_.as<float>(), n, c.hidden_dim, hb_.get(), dt, st);
        matmul(w.w2, hb_.get(), n, x, true);  // x += w2 hb
    }
    if (logit_rows == 0) return;
    const float* last = x + int64_t(n - logit_rows) * c.dim;
    rmsnorm(last, model_.final_norm.as<float>(), logit_rows, c.dim, c.norm_eps, xb_.get(), dt, st);
    matmul(model_.classifier(), xb_.get(), logit_rows, logits_.as<float>(), false);
}

void CudaBackend::forward_chunk(std::span<const int32_t> tokens, int start_pos, BlockTableView table,
                                float* logits, bool all_logits) {
    const int n = int(tokens.size());
    const int logit_rows = !logits ? 0 : all_logits ? n : 1;
    const cudaStream_t st = stream_->get();
    stage(tokens, start_pos, table);
    steps_.upload(st);
    if (n == 1 && logit_rows == 1 && opts_.use_graphs)
        graphs_.run(DecodeKind::Logits, st, [&] { enqueue_forward(1, 1); });
    else
        enqueue_forward(n, logit_rows);
    if (logit_rows > 0)
        CUDA_CHECK(cudaMemcpyAsync(logits, logits_.get(),
                                   size_t(logit_rows) * model_.config.vocab_size * sizeof(float),
                                   cudaMemcpyDeviceToHost, st));
    CUDA_CHECK(cudaStreamSynchronize(st));  // the next chunk rewrites the staged inputs
}

int32_t CudaBackend::decode_and_sample(int32_t token, int pos, BlockTableView table, Sampler& sampler,
                                       std::span<const int32_t> recent_tokens) {
    const SamplingParams& p = sampler.params();
    const size_t last_n = size_t(std::max(p.repeat_last_n, 0));
    if (recent_tokens.size() > last_n) recent_tokens = recent_tokens.subspan(recent_tokens.size() - last_n);
    if (sampler.vocab_size() != model_.config.vocab_size || !kv_pool_.get() ||
        recent_tokens.size() > size_t(steps_.max_recent()))
        return Backend::decode_and_sample(token, pos, table, sampler, recent_tokens);

    const cudaStream_t st = stream_->get();
    const std::span<const int32_t> tokens(&token, 1);
    check_call(tokens, pos, table);
    stage(tokens, pos, table);
    // one draw per sampled token, as the host sampler makes
    const double uniform =
        p.temperature > 0.0f ? double(sampler.next_random() >> 11) * (1.0 / 9007199254740992.0) : 0.0;
    steps_.sampling() = device_sampling(p, int32_t(recent_tokens.size()), uniform);
    std::copy(recent_tokens.begin(), recent_tokens.end(), steps_.recent());
    steps_.upload(st);
    auto step = [&] {
        enqueue_forward(1, 1);
        sample_token(logits_.as<float>(), model_.config.vocab_size, steps_.d_sampling(),
                     steps_.d_recent(), steps_.d_sampled_token(), st);
    };
    if (opts_.use_graphs) graphs_.run(DecodeKind::Sample, st, step);
    else step();
    steps_.download_sampled_token(st);
    CUDA_CHECK(cudaStreamSynchronize(st));
    return steps_.sampled_token();
}

namespace {

DeviceInfo require_device() {
    DeviceInfo info;
    std::string why;
    if (!probe_device(&info, &why)) fail(ErrorCode::BackendUnavailable, "CUDA backend unavailable: " + why);
    CUDA_CHECK(cudaSetDevice(info.device));
    return info;
}

}  // namespace

std::unique_ptr<Backend> make_backend(const Checkpoint& ckpt, const CudaBackendOptions& opts) {
    const DeviceInfo device = require_device();
    // Matrices in blocks stay in blocks; the plain-float ones share the activations' dtype.
    bool blocks = false;
    for (const auto& [t, n] : ckpt.matrix_types()) blocks = blocks || weight_type(t).quantized();
    const DType main = ckpt.main_weight_dtype();
    const DType activation = blocks                                       ? DType::F16
                             : main == DType::F16 || main == DType::BF16 ? main
                             : opts.keep_f32                             ? DType::F32
                             : opts.f32_as_bf16                          ? DType::BF16
                                                                         : DType::F16;
    auto stream = std::make_unique<Stream>();
    DeviceModel model = upload_model(ckpt, activation, opts.on_progress, stream->get());
    return std::make_unique<CudaBackend>(device, opts, std::move(stream), std::move(model));
}

std::unique_ptr<Backend> make_backend_synthetic(const ModelConfig& config, WeightMix mix, uint64_t seed,
                                                const CudaBackendOptions& opts) {
    validate_config(config, "synthetic CUDA model");
    const DeviceInfo device = require_device();
    auto stream = std::make_unique<Stream>();
    DeviceModel model = random_model(config, mix, seed, stream->get());
    return std::make_unique<CudaBackend>(device, opts, std::move(stream), std::move(model));
}

}  // namespace llamadesk::cuda
