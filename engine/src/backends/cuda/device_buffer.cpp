#include "backends/cuda/device_buffer.h"

#include <cstdio>

#include "backends/cuda/cuda_check.h"
#include "core/error.h"

namespace llamadesk::cuda {

std::string mib(size_t bytes) {
    char s[32];
    std::snprintf(s, sizeof s, "%.1f MiB", double(bytes) / (1024.0 * 1024.0));
    return s;
}

template <Memory kind>
CudaBytes<kind>::CudaBytes(size_t bytes, const std::string& what) : bytes_(bytes) {
    if (bytes == 0) return;
    const cudaError_t err = kind == Memory::Device ? cudaMalloc(&ptr_, bytes)
                                                   : cudaHostAlloc(&ptr_, bytes, cudaHostAllocDefault);
    if (err == cudaErrorMemoryAllocation) {
        cudaGetLastError();
        ptr_ = nullptr;
        if (kind == Memory::Pinned)
            fail(ErrorCode::OutOfMemory, "not enough page-locked host memory for " + what + ": needs " + mib(bytes));
        size_t free = 0, total = 0;
        cudaMemGetInfo(&free, &total);
        fail(ErrorCode::OutOfMemory, "not enough GPU memory for " + what + ": needs " + mib(bytes) +
                                         ", " + mib(free) + " free of " + mib(total));
    }
    CUDA_CHECK(err);
}

template <Memory kind>
CudaBytes<kind>::~CudaBytes() {
    if (!ptr_) return;
    if (kind == Memory::Device)
        cudaFree(ptr_);
    else
        cudaFreeHost(ptr_);
}

template class CudaBytes<Memory::Device>;
template class CudaBytes<Memory::Pinned>;

}  // namespace llamadesk::cuda
