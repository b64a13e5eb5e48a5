// Matrix products through cuBLAS: y (n, rows) [+]= x (n, cols) @ W^T for a row-major weight W
// (rows, cols), with tensor cores for F16/BF16 and FP32 accumulation (plain FP32 for F32).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "backends/cuda/device_buffer.h"
#include "model/dtype.h"

namespace llamadesk::cuda {

class Gemm {
public:
    explicit Gemm(cudaStream_t stream);
    ~Gemm();
    Gemm(const Gemm&) = delete;
    Gemm& operator=(const Gemm&) = delete;

    // W (rows, cols) and x (n, cols) in dtype; y (n, rows) F32 with ldy floats from one token's
    // row to the next (rows when y is the whole output; more when W is a slice of a taller
    // matrix). accumulate: y += instead of y =.
    void matmul(const void* w, const void* x, DType dtype, int rows, int cols, int n, float* y,
                int ldy, bool accumulate);

private:
    cublasHandle_t handle_ = nullptr;
    DeviceBuffer workspace_;  // given to cuBLAS so graph capture never makes it allocate
};

}  // namespace llamadesk::cuda
