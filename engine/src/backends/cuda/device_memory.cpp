#include <algorithm>
#include <cstdint>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/cuda_module.h"

namespace llamadesk::cuda {

int64_t memory_available() {
    size_t free = 0, total = 0;
    CUDA_CHECK(cudaMemGetInfo(&free, &total));
    // Headroom for cuBLAS workspaces, graph instances and other processes' growth.
    const int64_t headroom = std::max<int64_t>(int64_t(512) << 20, int64_t(total / 20));
    return std::max<int64_t>(0, int64_t(free) - headroom);
}

}  // namespace llamadesk::cuda
