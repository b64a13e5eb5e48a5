#include "backends/cuda/cuda_device.h"

#include <cuda_runtime.h>

#include <cstdio>

#include "backends/cuda/cuda_module.h"

namespace llamadesk::cuda {

bool probe_device(DeviceInfo* info, std::string* why) {
    // Without libcuda (no driver) the runtime reports an error here rather than crashing.
    int n_devices = 0;
    cudaError_t err = cudaGetDeviceCount(&n_devices);
    if (err != cudaSuccess) {
        cudaGetLastError();
        if (why)
            *why = std::string("no usable CUDA driver or device (") + cudaGetErrorString(err) + ")";
        return false;
    }
    if (n_devices == 0) {
        if (why) *why = "no CUDA device found";
        return false;
    }
    cudaDeviceProp prop{};
    err = cudaGetDeviceProperties(&prop, 0);
    if (err != cudaSuccess) {
        cudaGetLastError();
        if (why) *why = std::string("cannot read CUDA device 0: ") + cudaGetErrorString(err);
        return false;
    }
    info->device = 0;
    info->name = prop.name;
    info->compute_capability = prop.major * 10 + prop.minor;
    info->n_multiprocessors = prop.multiProcessorCount;
    info->total_memory = prop.totalGlobalMem;
    if (info->compute_capability < kMinComputeCapability) {
        if (why)
            *why = info->name + " has compute capability " + std::to_string(prop.major) + "." +
                   std::to_string(prop.minor) + "; this CUDA backend needs " +
                   std::to_string(kMinComputeCapability / 10) + "." + std::to_string(kMinComputeCapability % 10) +
                   " or newer";
        return false;
    }
    size_t free = 0, total = 0;
    err = cudaMemGetInfo(&free, &total);
    if (err != cudaSuccess) {
        cudaGetLastError();
        if (why) *why = std::string("cannot start a CUDA context: ") + cudaGetErrorString(err);
        return false;
    }
    info->free_memory = free;
    return true;
}

std::string describe(const DeviceInfo& info) {
    char s[256];
    std::snprintf(s, sizeof s, "%s (sm_%d, %.1f GiB)", info.name.c_str(), info.compute_capability,
                  double(info.total_memory) / (1024.0 * 1024.0 * 1024.0));
    return s;
}

bool backend_available(std::string* why) {
    DeviceInfo info;
    return probe_device(&info, why);
}

}  // namespace llamadesk::cuda
