// The model's weights in device memory, uploaded once. Each matrix keeps its own type: block types
// (Q8_0 ... Q6_K) stay as stored and are read by their own kernels (weight_kernels.h); plain-float
// matrices are in the model's activation dtype (F16/BF16 as stored, F32 converted to BF16 or F16
// unless kept F32). q|k|v and gate|up are stacked by rows so each is one matrix product. Norm
// weights are F32.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "backends/cuda/device_buffer.h"
#include "model/checkpoint.h"
#include "model/weight_mix.h"

namespace llamadesk::cuda {

// A (rows, cols) matrix as consecutive ranges of rows, each in one type. Stacked tensors of one
// type share a part; where their types differ (a Q4_K_M file's wv or w2 in Q6_K on some layers,
// next to Q4_K) each keeps its own part, and a product runs one kernel per part into its rows of
// the output. A part's buffer is its bytes rounded up to 16: the block GEMV reads whole 16-byte
// words, past the last block of the last row too.
struct DeviceMatrix {
    struct Part {
        DType dtype = DType::F16;
        int64_t rows = 0;
        DeviceBuffer data;
    };
    int64_t rows = 0;
    int64_t cols = 0;
    std::vector<Part> parts;

    int64_t bytes() const;
};

struct DeviceLayer {
    DeviceBuffer attention_norm;  // (dim,) F32
    DeviceMatrix wqkv;            // (q_dim + 2 kv_dim, dim): wq | wk | wv
    DeviceMatrix wo;              // (dim, q_dim)
    DeviceBuffer ffn_norm;        // (dim,) F32
    DeviceMatrix w13;             // (2 hidden_dim, dim): w1 (gate) | w3 (up)
    DeviceMatrix w2;              // (dim, hidden_dim)
};

struct DeviceModel {
    ModelConfig config;
    // Of plain-float matrices and of the activations that feed a product (cuBLAS wants one type
    // for both): F16 whenever a matrix is in blocks, which are widened to F16 for cuBLAS.
    DType activation_dtype = DType::F16;
    DeviceMatrix token_embedding; // (vocab_size, dim)
    std::vector<DeviceLayer> layers;
    DeviceBuffer final_norm;      // (dim,) F32
    DeviceMatrix output;          // (vocab_size, dim); no parts when tied to the embedding
    int64_t weight_bytes = 0;     // bytes of all buffers above

    const DeviceMatrix& classifier() const { return output.parts.empty() ? token_embedding : output; }
    // Elements of the largest part in blocks (0: none), for the prefill's widening scratch.
    int64_t largest_block_part() const;
};

using ProgressFn = std::function<void(float, const std::string&)>;

// activation: the dtype plain-float matrices are stored in (see DeviceModel). Reports progress by
// bytes uploaded.
DeviceModel upload_model(const Checkpoint& ckpt, DType activation, const ProgressFn& on_progress,
                         cudaStream_t stream);

// Random weights in the mix's types, uniform in +-1/sqrt(fan_in) so activations keep their scale;
// norms are 1. Block types repeat a short run of blocks quantized on the host (a speed model
// needs real block bytes, not distinct ones).
DeviceModel random_model(const ModelConfig& config, WeightMix mix, uint64_t seed, cudaStream_t stream);

}  // namespace llamadesk::cuda
