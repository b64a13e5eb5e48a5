// Every CUDA runtime and cuBLAS call goes through these checks: a failure becomes an EngineError
// naming the call, the file:line and CUDA's own error string.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

namespace llamadesk::cuda {

[[noreturn]] void throw_cuda_error(cudaError_t err, const char* expr, const char* file, int line);
[[noreturn]] void throw_cublas_error(cublasStatus_t status, const char* expr, const char* file,
                                     int line);

}  // namespace llamadesk::cuda

#define CUDA_CHECK(expr)                                                              \
    do {                                                                              \
        const cudaError_t cuda_err_ = (expr);                                         \
        if (cuda_err_ != cudaSuccess)                                                 \
            ::llamadesk::cuda::throw_cuda_error(cuda_err_, #expr, __FILE__, __LINE__); \
    } while (0)

#define CUBLAS_CHECK(expr)                                                                \
    do {                                                                                  \
        const cublasStatus_t cublas_status_ = (expr);                                     \
        if (cublas_status_ != CUBLAS_STATUS_SUCCESS)                                      \
            ::llamadesk::cuda::throw_cublas_error(cublas_status_, #expr, __FILE__, __LINE__); \
    } while (0)

// After a kernel launch: a bad configuration is reported here, not at the next sync.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())
