// The CPU backend: weights used in place from the checkpoint (mmap'd where the reader maps them),
// a persistent thread pool, SIMD kernels chosen for the running CPU, and a paged KV pool of f16
// (default) or f32.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "backends/backend.h"
#include "backends/cpu/attention.h"
#include "backends/cpu/kernels.h"
#include "backends/cpu/layer_ops.h"
#include "backends/cpu/thread_pool.h"
#include "core/host_memory.h"

namespace llamadesk::cpu {

class CpuBackend final : public Backend {
public:
    // kernels: the instruction set to use (tests run every one the CPU has); default the best.
    CpuBackend(const Checkpoint& ckpt, const CpuBackendOptions& opts, const Kernels& kernels = chosen_kernels());

    BackendKind kind() const override { return BackendKind::Cpu; }
    std::string device_description() const override;
    // The pool's storage (n_blocks * layout.block_elements() elements of kv_dtype()), for tests
    // that poison it.
    void* kv_pool_data() { return kv_pool_.data(); }
    // The checkpoint's tensors this backend holds its own interleaved copy of (interleave_weights).
    const std::vector<TensorView>& copied_weights() const { return copied_; }
    // Its worker threads, for the bench's figure of how long they wait.
    ThreadPool& thread_pool() { return pool_; }

private:
    struct Norms {  // f32 copies of the small norm vectors
        std::vector<float> attention, ffn;
    };

    // Copies every matrix of a type the kernels have an interleaved layout for (Kernels::
    // interleaved) into memory of its own, in that layout, and drops its mapped pages
    // (Checkpoint::release_pages): resident memory stays the weights' size. Where that memory is not
    // available with 1 GiB to spare, or the rows do not fill whole groups, a matrix stays as it is.
    void interleave_weights(const Checkpoint& ckpt);
    void allocate_kv_storage(const KvLayout& layout, int n_blocks) override;
    void forward_chunk(std::span<const int32_t> tokens, int start_pos, BlockTableView table, float* logits,
                       bool all_logits) override;
    void decode_batch_chunk(std::span<const BatchToken> batch, float* logits) override;
    // Consecutive rows of the activations that belong to one sequence: tokens at start_pos ..
    // start_pos + n - 1, cached through table.
    struct Segment {
        int row, n, start_pos;
        BlockTableView table;
    };
    // The forward pass of tokens made of segments (one for a prompt chunk, one per token for a
    // batched decode step): products over all rows at once, RoPE, cache writes and attention per
    // segment. logits: every row's when all_logits, else each segment's last row's.
    void forward_segments(std::span<const int32_t> tokens, std::span<const Segment> segments, float* logits,
                          bool all_logits);
    void copy_kv_block_out(int32_t block, std::byte* out) const override;
    void copy_kv_block_in(int32_t block, const std::byte* in) override;

    ModelWeights weights_;
    std::vector<TensorView> copied_;                     // as the checkpoint has them
    std::vector<MappedMemory> copies_;                  // their interleaved copies
    std::shared_ptr<const void> storage_;  // keeps the weights' memory alive
    const Kernels& kernels_;
    ThreadPool pool_;
    Attention attention_;
    Rope rope_;
    std::vector<Norms> norms_;     // (n_layers)
    std::vector<float> final_norm_;

    MappedMemory kv_pool_;  // (kv_pool_blocks(), kv_layout().block_elements()) of kv_dtype()

    // Activations of up to chunk_tokens() tokens, the chunk forward() splits longer calls into.
    std::vector<float> x_;    // (chunk_tokens(), dim) residual stream
    std::vector<float> xb_;   // (chunk_tokens(), dim) normed input / projection output
    std::vector<float> q_;    // (chunk_tokens(), dim)
    std::vector<float> k_;    // (chunk_tokens(), kv_dim)
    std::vector<float> v_;    // (chunk_tokens(), kv_dim)
    std::vector<float> att_;  // (chunk_tokens(), dim) attention output before wo
    std::vector<float> hb_;   // (chunk_tokens(), hidden_dim) gate, then SwiGLU output
    std::vector<float> hb2_;  // (chunk_tokens(), hidden_dim) up
};

}  // namespace llamadesk::cpu
