// The interface every compute backend implements: run tokens through the model, writing their keys
// and values into the paged KV pool and reading the whole prefix back through a block table.
// The CPU backend is also the reference the CUDA backend is tested against.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "cache/kv_layout.h"
#include "core/backend_kind.h"
#include "model/checkpoint.h"
#include "model/dtype.h"

namespace llamadesk {

class Sampler;

// One token of one sequence in a batched decode step: its position and its own block table.
struct BatchToken {
    int32_t token;
    int pos;
    BlockTableView table;
};

// The contract is enforced here once: forward() validates a call and splits it into chunks of
// the backend's own size, so a backend implements only the per-chunk pass and never re-checks.
class Backend {
public:
    virtual ~Backend() = default;

    virtual BackendKind kind() const = 0;                // Cpu or Cuda, never Auto
    std::string name() const;                            // "CPU", "CUDA": shown to users
    virtual std::string device_description() const = 0; // shown in the window's header
    DType kv_dtype() const { return kv_dtype_; }         // element type of the cache

    // (Re)allocates the KV pool: n_blocks blocks of layout.block_elements() elements.
    // Throws EngineError(InvalidArgument) when the layout does not match the model, and
    // EngineError(OutOfMemory) when it does not fit; the old pool is then kept.
    void allocate_kv_pool(const KvLayout& layout, int n_blocks);
    // Bytes of one block of `layout` in this backend's cache type.
    int64_t kv_bytes_per_block(const KvLayout& layout) const {
        return weight_type(kv_dtype()).bytes(layout.block_elements());
    }
    // Bytes a new KV pool may take on this device: the engine sizes the pool and the default
    // context by it. Host memory: what the machine has available now, the weights already loaded.
    virtual int64_t kv_memory_available() const;
    // Runs at most n_ctx positions from now on (a context chosen smaller than the model's); it
    // never grows.
    void limit_context(int n_ctx);

    // Runs tokens (positions start_pos .. start_pos + n - 1) through the model: their keys and
    // values are written into the cache slots the block table gives for those positions, and
    // attention reads positions 0 .. start_pos + n - 1. The table must cover start_pos + n
    // positions. Writes the last token's logits (vocab_size floats), or every token's
    // (n x vocab_size) when all_logits, to host memory. Any number of tokens that fits the
    // context may be passed: they run in chunks of chunk_tokens().
    void forward(std::span<const int32_t> tokens, int start_pos, BlockTableView table, float* logits,
                 bool all_logits = false);

    // Runs one token at pos and chooses the next one. The default calls forward() and the host
    // sampler; a device backend may sample on the device so only the token id crosses to the host.
    virtual int32_t decode_and_sample(int32_t token, int pos, BlockTableView table, Sampler& sampler,
                                      std::span<const int32_t> recent_tokens);

    // One token of each of several sequences in one pass, as Meta's model.py decodes a batch: every
    // product reads the weights once for all of them, and each token writes its keys and values
    // through its own block table and attends over its own prefix. logits receives one row
    // (vocab_size floats) per token, in order. Every token is checked as forward() checks one.
    void decode_batch(std::span<const BatchToken> batch, float* logits);

    // Tokens one forward_chunk() call takes at most: the size of the backend's activation buffers.
    int chunk_tokens() const { return chunk_tokens_; }

    // One pool block's keys and values as stored (kv_bytes_per_block() bytes), copied out to host
    // memory or in from it: KV snapshots on disk. Throws EngineError(Internal) on a block outside
    // the pool or a size that is not one block.
    void read_kv_block(int32_t block, std::span<std::byte> out) const;
    void write_kv_block(int32_t block, std::span<const std::byte> in);

protected:
    // Throws EngineError(InvalidArgument) unless kv_dtype is a cache type that a backend of `kind`
    // holds (cache/kv_cache_type.h), with head_dim a multiple of its block (32 for Q8_0).
    Backend(const ModelConfig& config, int chunk_tokens, DType kv_dtype, BackendKind kind);

    const ModelConfig& model_config() const { return config_; }
    const KvLayout& kv_layout() const { return layout_; }
    int kv_pool_blocks() const { return n_pool_blocks_; }

    // Throws EngineError unless tokens, positions and table make a valid call on the current
    // pool. forward() calls it; a decode path that bypasses forward() must call it too.
    void check_call(std::span<const int32_t> tokens, int start_pos, BlockTableView table) const;

    // Allocates the storage of a pool whose layout has been checked against the model; throws
    // EngineError(OutOfMemory), leaving the old pool in place, when it does not fit.
    virtual void allocate_kv_storage(const KvLayout& layout, int n_blocks) = 0;
    // One checked chunk of at most chunk_tokens() tokens. logits is null when no row of this chunk
    // is wanted (an earlier chunk of a prompt); else it receives the last row, or every row when
    // all_logits.
    virtual void forward_chunk(std::span<const int32_t> tokens, int start_pos, BlockTableView table,
                               float* logits, bool all_logits) = 0;
    // At most chunk_tokens() checked tokens of decode_batch(). The default runs them one after
    // another through forward_chunk(), reading the weights once per token.
    virtual void decode_batch_chunk(std::span<const BatchToken> batch, float* logits);
    // Copies of one checked block, kv_bytes_per_block(kv_layout()) bytes.
    virtual void copy_kv_block_out(int32_t block, std::byte* out) const = 0;
    virtual void copy_kv_block_in(int32_t block, const std::byte* in) = 0;

private:
    void check_kv_block(int32_t block, size_t bytes) const;

    ModelConfig config_;
    int chunk_tokens_;
    DType kv_dtype_;
    bool has_kv_pool_ = false;
    KvLayout layout_;
    int n_pool_blocks_ = 0;
    std::vector<float> decode_logits_;  // host logits of the default decode_and_sample
};

struct CpuBackendOptions {
    int n_threads = 0;  // 0: one per physical core the process may use (default_compute_threads)
    DType kv_dtype = DType::F16;
};

std::unique_ptr<Backend> make_cpu_backend(const Checkpoint& ckpt, const CpuBackendOptions& opts);

struct CudaBackendOptions {
    bool use_graphs = true;
    bool f32_as_bf16 = true;
    bool keep_f32 = false;            // F32 checkpoints stay F32 on the device (tests: exact comparison)
    DType kv_dtype = DType::F16;
    bool decode_with_cublas = false;  // single-token products through cuBLAS instead of our GEMV
    int64_t kv_budget_bytes = 0;
    std::function<void(float, const std::string&)> on_progress;
};

// True when the CUDA module (backends/cuda/cuda_module.h) is installed and finds a usable device
// (one this build has kernels for). `why` receives the reason when it is false.
bool cuda_backend_available(std::string* why);
// Throws EngineError(BackendUnavailable / OutOfMemory) with a clear message on failure.
std::unique_ptr<Backend> make_cuda_backend(const Checkpoint& ckpt, const CudaBackendOptions& opts);
// Device memory a CUDA backend could fill now, as its kv_memory_available() counts it (free less
// headroom); -1 where cuda_backend_available() is false.
int64_t cuda_memory_available();

}  // namespace llamadesk
