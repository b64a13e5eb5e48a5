// The CPU backend: weights used in place from the checkpoint (mmap'd where the reader maps them),
// a persistent thread pool, SIMD kernels chosen for the running CPU, and an f32 paged KV pool.
#pragma once

#include <memory>
#include <vector>

#include "backends/backend.h"
#include "backends/cpu/attention.h"
#include "backends/cpu/kernels.h"
#include "backends/cpu/layer_ops.h"
#include "backends/cpu/thread_pool.h"

namespace llamadesk::cpu {

class CpuBackend final : public Backend {
public:
    // kernels: the instruction set to use (tests run every one the CPU has); default the best.
    CpuBackend(const Checkpoint& ckpt, const CpuBackendOptions& opts, const Kernels& kernels = best_kernels());

    std::string name() const override { return "CPU"; }
    std::string device_description() const override;
    std::string kv_dtype() const override { return "f32"; }
    void allocate_kv_pool(const KvLayout& layout, int n_blocks) override;
    int64_t kv_bytes_per_block() const override;
    void forward(std::span<const int32_t> tokens, int start_pos, BlockTableView table, float* logits,
                 bool all_logits = false) override;

    // The pool's storage (n_blocks * layout.block_elements() floats), for tests that poison it.
    float* kv_pool_data() { return kv_pool_.get(); }
    int max_batch() const { return max_batch_; }

private:
    struct Norms {  // f32 copies of the small norm vectors
        std::vector<float> attention, ffn;
    };

    void check_call(std::span<const int32_t> tokens, int start_pos, BlockTableView table) const;
    void forward_batch(std::span<const int32_t> tokens, int start_pos, BlockTableView table,
                       float* logits, bool all_logits);

    ModelConfig config_;
    ModelWeights weights_;
    std::shared_ptr<const void> storage_;  // keeps the weights' memory alive
    const Kernels& kernels_;
    ThreadPool pool_;
    Attention attention_;
    Rope rope_;
    std::vector<Norms> norms_;     // (n_layers)
    std::vector<float> final_norm_;

    KvLayout layout_;
    int n_pool_blocks_ = 0;
    std::unique_ptr<float[]> kv_pool_;  // (n_pool_blocks, layout_.block_elements())

    // Activations of up to max_batch_ tokens; longer calls run in chunks.
    int max_batch_;
    std::vector<float> x_;    // (max_batch, dim) residual stream
    std::vector<float> xb_;   // (max_batch, dim) normed input / projection output
    std::vector<float> q_;    // (max_batch, dim)
    std::vector<float> k_;    // (max_batch, kv_dim)
    std::vector<float> v_;    // (max_batch, kv_dim)
    std::vector<float> att_;  // (max_batch, dim) attention output before wo
    std::vector<float> hb_;   // (max_batch, hidden_dim) gate, then SwiGLU output
    std::vector<float> hb2_;  // (max_batch, hidden_dim) up
};

}  // namespace llamadesk::cpu
