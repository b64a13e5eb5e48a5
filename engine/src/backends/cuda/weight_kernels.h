// The CUDA side of model/weight_types.h: one row per DType with the kernels that read a matrix
// stored in that type. Block types keep their blocks as stored in device memory; each has one
// file in quant/ (its block decoding) that instantiates the shared kernels of quant_kernels.cuh.
// Adding a type is that file and one row in weight_kernels.cpp.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "model/dtype.h"

namespace llamadesk::cuda {

struct WeightKernels {
    DType dtype;
    // y (rows) = W (rows, cols) @ x (cols), or y += that when accumulate. x is in the activation
    // dtype: W's own for plain floats, F16 for block types. A block-type W must be 16-byte
    // aligned and readable up to the next multiple of 16 bytes after its last row (see
    // DeviceMatrix), since the kernel reads whole 16-byte words.
    void (*gemv)(const void* w, const void* x, int rows, int cols, float* y, bool accumulate,
                 cudaStream_t stream);
    // out (rows, cols) F16 = W widened, for cuBLAS; nullptr for plain floats (cuBLAS reads them).
    void (*to_f16)(const void* w, int rows, int cols, void* out, cudaStream_t stream);
    // x (n, cols) F32 = rows tokens[i] of the table (vocab, cols).
    void (*embed)(const int32_t* tokens, int n, const void* table, int vocab, int cols, float* x,
                  cudaStream_t stream);
};

const WeightKernels& weight_kernels(DType dtype);

// The launchers each quant/*.cu file defines.
#define LLAMADESK_CUDA_BLOCK_TYPE(t)                                                               \
    void gemv_##t(const void* w, const void* x, int rows, int cols, float* y, bool accumulate,      \
                  cudaStream_t stream);                                                            \
    void to_f16_##t(const void* w, int rows, int cols, void* out, cudaStream_t stream);            \
    void embed_##t(const int32_t* tokens, int n, const void* table, int vocab, int cols, float* x, \
                   cudaStream_t stream);

LLAMADESK_CUDA_BLOCK_TYPE(q8_0)
LLAMADESK_CUDA_BLOCK_TYPE(q4_0)
LLAMADESK_CUDA_BLOCK_TYPE(q4_1)
LLAMADESK_CUDA_BLOCK_TYPE(q5_0)
LLAMADESK_CUDA_BLOCK_TYPE(q5_1)
LLAMADESK_CUDA_BLOCK_TYPE(q4_k)
LLAMADESK_CUDA_BLOCK_TYPE(q5_k)
LLAMADESK_CUDA_BLOCK_TYPE(q6_k)

#undef LLAMADESK_CUDA_BLOCK_TYPE

}  // namespace llamadesk::cuda
