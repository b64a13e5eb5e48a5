// The CUDA backend: weights uploaded once, the paged KV pool in device memory, cuBLAS for
// prefill projections, our GEMV for single-token decode, device-side sampling and CUDA graphs
// for the decode step.
#pragma once

#include <cuda_runtime.h>

#include <memory>

#include "backends/backend.h"
#include "backends/cuda/cuda_device.h"
#include "backends/cuda/decode_graph.h"
#include "backends/cuda/device_model.h"
#include "backends/cuda/gemm.h"
#include "backends/cuda/step_inputs.h"

namespace llamadesk::cuda {

// Owns the stream every kernel of the backend runs on.
class Stream {
public:
    Stream() { CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
    ~Stream() { cudaStreamDestroy(stream_); }
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;
    cudaStream_t get() const { return stream_; }

private:
    cudaStream_t stream_ = nullptr;
};

class CudaBackend final : public Backend {
public:
    // model is built by the caller (upload_model or random_model) on this backend's stream.
    CudaBackend(const DeviceInfo& device, const CudaBackendOptions& opts,
                std::unique_ptr<Stream> stream, DeviceModel model);
    ~CudaBackend() override;

    BackendKind kind() const override { return BackendKind::Cuda; }
    std::string device_description() const override { return describe(device_); }

    int64_t kv_memory_available() const override;

    int32_t decode_and_sample(int32_t token, int pos, BlockTableView table, Sampler& sampler,
                              std::span<const int32_t> recent_tokens) override;

    const DeviceModel& model() const { return model_; }

private:
    void allocate_kv_storage(const KvLayout& layout, int n_blocks) override;
    void forward_chunk(std::span<const int32_t> tokens, int start_pos, BlockTableView table, float* logits,
                       bool all_logits) override;
    void copy_kv_block_out(int32_t block, std::byte* out) const override;
    void copy_kv_block_in(int32_t block, const std::byte* in) override;

    // a checked call's inputs into the pinned mirror
    void stage(std::span<const int32_t> tokens, int start_pos, BlockTableView table);
    // enqueues the forward pass of the staged tokens; the classifier runs on the last
    // logit_rows of them into logits_ (logit_rows, vocab)
    void enqueue_forward(int n_tokens, int logit_rows);
    // y [+]= W x for n tokens, part by part: the part's GEMV for one token (unless
    // decode_with_cublas), else cuBLAS, on slabs of widened_ for parts in blocks
    void matmul(const DeviceMatrix& w, const void* x, int n, float* y, bool accumulate);
    AttentionShape attention_shape(int n_tokens, int layer) const;

    DeviceInfo device_;
    CudaBackendOptions opts_;
    std::unique_ptr<Stream> stream_;
    DeviceModel model_;
    Gemm gemm_;
    int decode_splits_; // flash-decoding splits per head

    // activations, (chunk_tokens(), ...) each
    DeviceBuffer x_;         // (n, dim) F32 residual stream
    DeviceBuffer xb_;        // (n, dim) activation dtype: normalized input of a matrix product
    DeviceBuffer qkv_;       // (n, q_dim + 2 kv_dim) F32
    DeviceBuffer att_;       // (n, q_dim) activation dtype: attention output
    DeviceBuffer gate_up_;   // (n, 2 hidden_dim) F32
    DeviceBuffer hb_;        // (n, hidden_dim) activation dtype: SwiGLU output
    DeviceBuffer logits_;    // (n, vocab) F32
    DeviceBuffer partials_;  // (max(n, decode_splits_) * n_heads, head_dim + 2) F32
    DeviceBuffer widened_;   // F16 slab of a matrix in blocks, for cuBLAS; empty without blocks

    DeviceBuffer kv_pool_;   // kv_pool_blocks() blocks of kv_layout() in kv_dtype()
    StepInputs steps_;
    DecodeGraphs graphs_;
};

}  // namespace llamadesk::cuda
