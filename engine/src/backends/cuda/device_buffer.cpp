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

DeviceBuffer::DeviceBuffer(size_t bytes, const std::string& what) : bytes_(bytes) {
    if (bytes == 0) return;
    const cudaError_t err = cudaMalloc(&ptr_, bytes);
    if (err == cudaErrorMemoryAllocation) {
        cudaGetLastError();
        size_t free = 0, total = 0;
        cudaMemGetInfo(&free, &total);
        ptr_ = nullptr;
        fail(ErrorCode::OutOfMemory, "not enough GPU memory for " + what + ": needs " + mib(bytes) +
                                         ", " + mib(free) + " free of " + mib(total));
    }
    CUDA_CHECK(err);
}

DeviceBuffer::~DeviceBuffer() {
    if (ptr_) cudaFree(ptr_);
}

PinnedBuffer::PinnedBuffer(size_t bytes, const std::string& what) : bytes_(bytes) {
    if (bytes == 0) return;
    const cudaError_t err = cudaHostAlloc(&ptr_, bytes, cudaHostAllocDefault);
    if (err == cudaErrorMemoryAllocation) {
        cudaGetLastError();
        ptr_ = nullptr;
        fail(ErrorCode::OutOfMemory, "not enough page-locked host memory for " + what + ": needs " +
                                         mib(bytes));
    }
    CUDA_CHECK(err);
}

PinnedBuffer::~PinnedBuffer() {
    if (ptr_) cudaFreeHost(ptr_);
}

}  // namespace llamadesk::cuda
