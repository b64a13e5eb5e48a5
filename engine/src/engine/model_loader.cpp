#include <algorithm>
#include <filesystem>
#include <limits>

#include "cache/kv_cache_type.h"
#include "chat/chat_template.h"
#include "engine/context_size.h"
#include "core/cpu_threads.h"
#include "core/error.h"
#include "engine/loaded_model.h"

namespace llamadesk {

namespace {

constexpr int64_t kDefaultKvCap = int64_t(1) << 30;  // 1 GiB
constexpr int kDefaultContextsInPool = 4;

void report(const LoadParams& params, float fraction, const std::string& stage) {
    if (params.on_progress) params.on_progress(fraction, stage);
}

// CUDA when its module is installed and a usable device is present (Auto or Cuda), else the CPU,
// and `note` says why CUDA is not used (no module, no driver, no device, out of device memory), or
// that CUDA keeps another cache type than the one asked for, for ModelInfo::device: a working
// model beats an error.
std::unique_ptr<Backend> make_backend(const LoadParams& params, const Checkpoint& ckpt, std::string* note) {
    if (params.backend != BackendKind::Cpu) {
        std::string why;
        if (cuda_backend_available(&why)) {
            CudaBackendOptions opts;
            opts.use_graphs = params.cuda_graphs;
            opts.f32_as_bf16 = params.cuda_f32_as_bf16;
            opts.kv_budget_bytes = params.kv_cache_bytes;
            std::string kv_note;
            opts.kv_dtype = kv_dtype_of(kv_cache_type_held(BackendKind::Cuda, params.kv_cache_type, &kv_note));
            opts.on_progress = [&params](float f, const std::string& stage) {
                report(params, 0.6f + 0.3f * std::clamp(f, 0.0f, 1.0f), stage);
            };
            try {
                std::unique_ptr<Backend> cuda = make_cuda_backend(ckpt, opts);
                *note = kv_note;
                return cuda;
            } catch (const EngineError& e) {
                *note = std::string("CUDA failed: ") + e.what();
            }
        } else {
            *note = (params.backend == BackendKind::Cuda ? "CUDA requested but unavailable: " : "CUDA unavailable: ") + why;
        }
    }
    CpuBackendOptions opts;
    opts.n_threads = params.n_threads;
    opts.kv_dtype = kv_dtype_of(params.kv_cache_type);
    return make_cpu_backend(ckpt, opts);
}

// Default budget: room for kDefaultContextsInPool full contexts, capped at 1 GiB, but never
// less than one full context so a single conversation can always reach the context length.
// Either budget is then limited by the free memory of the backend's device.
int kv_pool_blocks(const LoadParams& params, const ModelConfig& config, int64_t bytes_per_block,
                   const Backend& backend) {
    const int64_t blocks_per_context = KvLayout{0, 0, 0, params.block_size}.blocks_for(config.seq_len);
    int64_t n_blocks = 0;
    if (params.kv_cache_bytes > 0) {
        n_blocks = params.kv_cache_bytes / bytes_per_block;
        if (n_blocks < 1)
            fail(ErrorCode::OutOfMemory,
                 "the KV cache budget of " + std::to_string(params.kv_cache_bytes) +
                     " bytes is smaller than one block (" + std::to_string(bytes_per_block) +
                     " bytes for " + std::to_string(params.block_size) + " tokens)");
    } else {
        const int64_t context_bytes = blocks_per_context * bytes_per_block;
        const int64_t budget =
            std::max(std::min(kDefaultContextsInPool * context_bytes, kDefaultKvCap), context_bytes);
        n_blocks = budget / bytes_per_block;
    }
    const int64_t device_blocks = backend.kv_memory_available() / bytes_per_block;
    if (device_blocks < 1)
        fail(ErrorCode::OutOfMemory, "not enough free memory on " + backend.device_description() +
                                         " for one KV cache block (" + std::to_string(bytes_per_block) + " bytes)");
    n_blocks = std::min(n_blocks, device_blocks);
    return int(std::min<int64_t>(n_blocks, std::numeric_limits<int32_t>::max()));
}

// The file's name, unless it is a content hash (Ollama's blobs/sha256-<hex>, a Hugging Face cache
// blob opened directly): then the name the checkpoint gives itself, where it gives one.
std::string model_name(const Checkpoint& ckpt) {
    const std::string stem = std::filesystem::path(ckpt.path).stem().string();
    const std::string hex = stem.starts_with("sha256-") ? stem.substr(7) : stem;
    const bool hash = hex.size() == 64 && std::all_of(hex.begin(), hex.end(), [](char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
    });
    return hash && !ckpt.name.empty() ? ckpt.name : stem;
}

ModelInfo describe(const LoadedModel& m, int n_threads, const std::string& backend_note) {
    const ModelConfig& c = m.checkpoint.config;
    ModelInfo info;
    info.path = m.checkpoint.path;
    info.name = model_name(m.checkpoint);
    info.format = m.checkpoint.format;
    info.weight_dtype = dtype_name(m.checkpoint.main_weight_dtype());
    info.weight_types = m.checkpoint.describe_weight_types();
    info.n_params = m.checkpoint.n_params();
    info.weight_bytes = m.checkpoint.weight_bytes();
    info.dim = c.dim;
    info.hidden_dim = c.hidden_dim;
    info.n_layers = c.n_layers;
    info.n_heads = c.n_heads;
    info.n_kv_heads = c.n_kv_heads;
    info.head_dim = c.head_dim();
    info.vocab_size = c.vocab_size;
    info.context_length = c.seq_len;
    info.rope_theta = c.rope_theta;
    info.backend = m.backend->name();
    info.device = m.backend->device_description();
    if (!backend_note.empty()) info.device += "; " + backend_note;
    info.n_threads = m.backend->kind() == BackendKind::Cpu ? n_threads : 0;
    info.tokenizer = m.tokenizer->kind() + ": " + m.checkpoint.tokenizer.describe();
    const FormatChoice format = suggested_chat_format(m.checkpoint.chat_template, info.name, *m.tokenizer);
    info.chat_format = format.format;
    info.chat_format_reason = format.reason;
    info.chat_format_guessed = format.guessed;
    return info;
}

}  // namespace

std::unique_ptr<LoadedModel> load_model(const LoadParams& params) {
    if (params.model_path.empty()) fail(ErrorCode::InvalidArgument, "no model path given");
    if (params.block_size < 1 || params.block_size > 4096)
        fail(ErrorCode::InvalidArgument,
             "KV cache block size must be between 1 and 4096 tokens, not " + std::to_string(params.block_size));
    if (params.n_threads < 0) fail(ErrorCode::InvalidArgument, "thread count cannot be negative");

    auto m = std::make_unique<LoadedModel>();
    report(params, 0.0f, "reading checkpoint");
    m->checkpoint = open_checkpoint(params.model_path, params.tokenizer_path);
    report(params, 0.3f, "validating weights");
    validate_weights(m->checkpoint);

    report(params, 0.5f, "loading tokenizer");
    m->tokenizer = Tokenizer::from_source(m->checkpoint.tokenizer);
    if (m->tokenizer->vocab_size() != m->checkpoint.config.vocab_size)
        fail(ErrorCode::TokenizerMismatch,
             "the tokenizer (" + m->checkpoint.tokenizer.describe() + ") has " +
                 std::to_string(m->tokenizer->vocab_size()) + " pieces but the model " +
                 m->checkpoint.path + " has a vocabulary of " +
                 std::to_string(m->checkpoint.config.vocab_size) + "; give the model's own tokenizer");

    report(params, 0.6f, "preparing backend");
    std::string backend_note;
    m->backend = make_backend(params, m->checkpoint, &backend_note);

    report(params, 0.9f, "allocating KV cache");
    ModelConfig& c = m->checkpoint.config;
    KvLayout layout{c.n_layers, c.n_kv_heads, c.head_dim(), params.block_size};
    const int64_t bytes_per_block = m->backend->kv_bytes_per_block(layout);
    const int trained_context = c.seq_len;
    const ContextChoice context =
        choose_context(params, trained_context, double(bytes_per_block) / params.block_size,
                       m->backend->kv_memory_available(), dtype_name(m->backend->kv_dtype()));
    if (context.n_ctx < c.seq_len) {
        c.seq_len = context.n_ctx;
        m->backend->limit_context(context.n_ctx);
    }
    const int n_blocks = kv_pool_blocks(params, c, bytes_per_block, *m->backend);
    m->backend->allocate_kv_pool(layout, n_blocks);
    m->pool = std::make_unique<KvPool>(layout, n_blocks, bytes_per_block);

    const int n_threads = compute_threads(params.n_threads);
    m->info = describe(*m, n_threads, backend_note);
    m->info.trained_context_length = trained_context;
    m->info.context_reason = context.reason;
    report(params, 1.0f, "ready");
    return m;
}

}  // namespace llamadesk
