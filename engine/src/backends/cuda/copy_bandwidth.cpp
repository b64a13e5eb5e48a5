#include <algorithm>
#include <vector>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/cuda_module.h"
#include "backends/cuda/device_buffer.h"

namespace llamadesk::cuda {

double copy_bandwidth() {
    size_t free = 0, total = 0;
    CUDA_CHECK(cudaMemGetInfo(&free, &total));
    const size_t bytes = std::min<size_t>(size_t(2) << 30, free / 4);  // 2 GiB each way on an H200
    DeviceBuffer src(bytes, "the copy bandwidth test"), dst(bytes, "the copy bandwidth test");
    CUDA_CHECK(cudaMemset(src.get(), 0x5a, bytes));  // not zeros: nothing may shortcut them
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    std::vector<float> ms;
    for (int i = 0; i < 12; ++i) {
        CUDA_CHECK(cudaEventRecord(start));
        CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice));
        CUDA_CHECK(cudaEventRecord(stop));
        CUDA_CHECK(cudaEventSynchronize(stop));
        float t = 0.0f;
        CUDA_CHECK(cudaEventElapsedTime(&t, start, stop));
        if (i >= 2) ms.push_back(t);  // the first two warm up
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    std::sort(ms.begin(), ms.end());
    return 2.0 * double(bytes) / (double(ms[ms.size() / 2]) * 1e-3);
}

}  // namespace llamadesk::cuda
