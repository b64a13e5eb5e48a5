// The model's weights in device memory, uploaded once. Matrices are in one dtype (F16/BF16 as
// stored; F32 checkpoints converted to BF16 or F16 unless kept F32), with q|k|v and gate|up
// concatenated by rows so each is one matrix product. Norm weights are F32.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "backends/cuda/device_buffer.h"
#include "model/checkpoint.h"

namespace llamadesk::cuda {

struct DeviceLayer {
    DeviceBuffer attention_norm;  // (dim,) F32
    DeviceBuffer wqkv;            // (q_dim + 2 kv_dim, dim): wq | wk | wv
    DeviceBuffer wo;              // (dim, q_dim)
    DeviceBuffer ffn_norm;        // (dim,) F32
    DeviceBuffer w13;             // (2 hidden_dim, dim): w1 (gate) | w3 (up)
    DeviceBuffer w2;              // (dim, hidden_dim)
};

struct DeviceModel {
    ModelConfig config;
    DType dtype = DType::F16;     // of every matrix and of the embedding table
    DeviceBuffer token_embedding; // (vocab_size, dim)
    std::vector<DeviceLayer> layers;
    DeviceBuffer final_norm;      // (dim,) F32
    DeviceBuffer output;          // (vocab_size, dim); empty when tied to the embedding
    int64_t weight_bytes = 0;     // bytes of all buffers above

    const void* classifier() const { return output.get() ? output.get() : token_embedding.get(); }
};

using ProgressFn = std::function<void(float, const std::string&)>;

// target: the dtype of the device matrices. Reports progress by bytes uploaded.
DeviceModel upload_model(const Checkpoint& ckpt, DType target, const ProgressFn& on_progress,
                         cudaStream_t stream);

// Random weights, uniform in +-1/sqrt(fan_in) so activations keep their scale; norms are 1.
DeviceModel random_model(const ModelConfig& config, DType dtype, uint64_t seed, cudaStream_t stream);

}  // namespace llamadesk::cuda
