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
#include "llamadesk/engine.h"
#include "model/checkpoint.h"

namespace llamadesk {

class Sampler;

class Backend {
public:
    virtual ~Backend() = default;

    virtual std::string name() const = 0;                // "CPU", "CUDA"
    virtual std::string device_description() const = 0; // shown in the window's header
    virtual std::string kv_dtype() const = 0;            // element type of the cache

    // (Re)allocates the KV pool: n_blocks blocks of layout.block_elements() elements.
    // Throws EngineError(OutOfMemory) when it does not fit; the old pool is then kept.
    virtual void allocate_kv_pool(const KvLayout& layout, int n_blocks) = 0;
    virtual int64_t kv_bytes_per_block() const = 0;
    // Bytes a new KV pool may take on this device: the engine sizes the pool as the smaller of
    // this and the memory budget. Host memory has no limit here beyond the budget.
    virtual int64_t kv_memory_available() const { return std::numeric_limits<int64_t>::max(); }

    // Runs tokens (positions start_pos .. start_pos + n - 1) through the model: their keys and
    // values are written into the cache slots the block table gives for those positions, and
    // attention reads positions 0 .. start_pos + n - 1. The table must cover start_pos + n
    // positions. Writes the last token's logits (vocab_size floats), or every token's
    // (n x vocab_size) when all_logits, to host memory.
    virtual void forward(std::span<const int32_t> tokens, int start_pos, BlockTableView table,
                         float* logits, bool all_logits = false) = 0;

    // Runs one token at pos and chooses the next one. The default calls forward() and the host
    // sampler; a device backend may sample on the device so only the token id crosses to the host.
    virtual int32_t decode_and_sample(int32_t token, int pos, BlockTableView table, Sampler& sampler,
                                      std::span<const int32_t> recent_tokens);

private:
    std::vector<float> decode_logits_;  // host logits of the default decode_and_sample
};

struct CpuBackendOptions {
    int n_threads = 0;  // 0: all cores
};

std::unique_ptr<Backend> make_cpu_backend(const Checkpoint& ckpt, const CpuBackendOptions& opts);

struct CudaBackendOptions {
    bool use_graphs = true;
    bool f32_as_bf16 = true;
    bool keep_f32 = false;            // F32 checkpoints stay F32 on the device (tests: exact comparison)
    bool decode_with_cublas = false;  // single-token products through cuBLAS instead of our GEMV
    int64_t kv_budget_bytes = 0;
    std::function<void(float, const std::string&)> on_progress;
};

// True when this build has the CUDA backend and a usable device (compute capability >= 7.5).
// `why` receives the reason when it is false.
bool cuda_backend_available(std::string* why);
// Throws EngineError(BackendUnavailable / OutOfMemory) with a clear message on failure.
std::unique_ptr<Backend> make_cuda_backend(const Checkpoint& ckpt, const CudaBackendOptions& opts);

}  // namespace llamadesk
