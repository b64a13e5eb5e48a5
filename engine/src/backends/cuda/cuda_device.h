// Which GPU we run on and whether it can run us.
#pragma once

#include <string>

namespace llamadesk::cuda {

// Turing (7.5) is the oldest with bf16-capable cuBLAS paths, and the device needs this build's
// kernels: CMake passes the oldest architecture compiled for, whose PTX newer devices compile.
constexpr int kMinComputeCapability = LLAMADESK_CUDA_OLDEST_ARCH > 75 ? LLAMADESK_CUDA_OLDEST_ARCH : 75;
// A value outside real compute capabilities means CMake read no architecture, and the probe would
// refuse every device.
static_assert(LLAMADESK_CUDA_OLDEST_ARCH >= 50 && LLAMADESK_CUDA_OLDEST_ARCH < 200,
              "LLAMADESK_CUDA_OLDEST_ARCH is not a compute capability: check CMAKE_CUDA_ARCHITECTURES");

struct DeviceInfo {
    int device = 0;
    std::string name;
    int compute_capability = 0;  // 10 * major + minor
    int n_multiprocessors = 0;
    size_t total_memory = 0;
    size_t free_memory = 0;
};

// Device 0's properties; false with the reason in *why when there is no usable device
// (no driver, no device, or one older than kMinComputeCapability). Never throws.
bool probe_device(DeviceInfo* info, std::string* why);

std::string describe(const DeviceInfo& info);  // "NVIDIA H200 (sm_90, 139.8 GiB)"

}  // namespace llamadesk::cuda
