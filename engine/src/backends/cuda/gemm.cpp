#include "backends/cuda/gemm.h"

#include "backends/cuda/cuda_check.h"
#include "core/error.h"
#include "model/weight_types.h"

namespace llamadesk::cuda {

namespace {

constexpr size_t kWorkspaceBytes = size_t(32) << 20;

cudaDataType_t cuda_type(DType dtype) {
    switch (dtype) {
    case DType::F32: return CUDA_R_32F;
    case DType::F16: return CUDA_R_16F;
    case DType::BF16: return CUDA_R_16BF;
    default: break;  // blocks are widened to F16 before they reach cuBLAS
    }
    fail(ErrorCode::Internal, std::string("cuBLAS cannot read ") + dtype_name(dtype));
}

}  // namespace

Gemm::Gemm(cudaStream_t stream) : workspace_(kWorkspaceBytes, "the cuBLAS workspace") {
    CUBLAS_CHECK(cublasCreate(&handle_));
    try {
        CUBLAS_CHECK(cublasSetStream(handle_, stream));
        CUBLAS_CHECK(cublasSetWorkspace(handle_, workspace_.get(), workspace_.bytes()));
        // F32 stays true FP32 (no TF32), so F32 models match the CPU to 1e-3
        CUBLAS_CHECK(cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH));
    } catch (...) {
        cublasDestroy(handle_);
        throw;
    }
}

Gemm::~Gemm() { cublasDestroy(handle_); }

void Gemm::matmul(const void* w, const void* x, DType dtype, int rows, int cols, int n, float* y,
                  int ldy, bool accumulate) {
    // Column-major view: W is (cols x rows) with ld cols, x is (cols x n), y is (rows x n) with
    // ld ldy; y = W^T x.
    const float alpha = 1.0f, beta = accumulate ? 1.0f : 0.0f;
    const cudaDataType_t t = cuda_type(dtype);
    CUBLAS_CHECK(cublasGemmEx(handle_, CUBLAS_OP_T, CUBLAS_OP_N, rows, n, cols, &alpha, w, t, cols,
                              x, t, cols, &beta, y, CUDA_R_32F, ldy, CUBLAS_COMPUTE_32F,
                              CUBLAS_GEMM_DEFAULT));
}

}  // namespace llamadesk::cuda
