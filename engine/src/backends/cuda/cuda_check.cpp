#include "backends/cuda/cuda_check.h"

#include <string>

#include "core/error.h"

namespace llamadesk::cuda {

namespace {

ErrorCode code_of(cudaError_t err) {
    switch (err) {
    case cudaErrorMemoryAllocation: return ErrorCode::OutOfMemory;
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorInitializationError:
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorUnsupportedPtxVersion: return ErrorCode::BackendUnavailable;
    default: return ErrorCode::Internal;
    }
}

std::string where(const char* expr, const char* file, int line) {
    return std::string(expr) + " at " + file + ":" + std::to_string(line);
}

}  // namespace

void throw_cuda_error(cudaError_t err, const char* expr, const char* file, int line) {
    cudaGetLastError();  // clear a sticky-free error so the next call starts clean
    fail(code_of(err), std::string("CUDA error ") + cudaGetErrorName(err) + " (" +
                           cudaGetErrorString(err) + ") in " + where(expr, file, line));
}

void throw_cublas_error(cublasStatus_t status, const char* expr, const char* file, int line) {
    const ErrorCode code =
        status == CUBLAS_STATUS_ALLOC_FAILED ? ErrorCode::OutOfMemory : ErrorCode::Internal;
    fail(code, std::string("cuBLAS error ") + cublasGetStatusName(status) + " (" +
                   cublasGetStatusString(status) + ") in " + where(expr, file, line));
}

}  // namespace llamadesk::cuda
