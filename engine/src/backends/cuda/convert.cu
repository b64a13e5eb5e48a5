// Element conversions on upload (F32 checkpoints stored as F16/BF16 on the device) and random
// weights generated in place for benchmarks.
#include <algorithm>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/device_math.cuh"
#include "backends/cuda/kernels.h"

namespace llamadesk::cuda {

static int grid_for(int64_t n) { return int(std::min<int64_t>((n + 255) / 256, 65535)); }

template <typename T>
static __global__ void convert_kernel(const float* __restrict__ src, int64_t n, T* __restrict__ dst) {
    for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
        dst[i] = from_float<T>(src[i]);
}

// splitmix64: a counter-based generator, so any element can be drawn independently.
__device__ __forceinline__ uint64_t splitmix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

template <typename T>
static __global__ void random_kernel(T* __restrict__ dst, int64_t n, float scale, uint64_t seed) {
    for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
        const float u = float(splitmix64(seed ^ splitmix64(uint64_t(i))) >> 40) * (1.0f / 16777216.0f);
        dst[i] = from_float<T>((2.0f * u - 1.0f) * scale);
    }
}

static __global__ void fill_kernel(float* __restrict__ dst, int64_t n, float value) {
    for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
        dst[i] = value;
}

template <typename T>
static void launch_convert(const float* src, int64_t n, T* dst, cudaStream_t stream) {
    convert_kernel<T><<<grid_for(n), 256, 0, stream>>>(src, n, dst);
    CUDA_CHECK_LAUNCH();
}

template <typename T>
static void launch_random(T* dst, int64_t n, float scale, uint64_t seed, cudaStream_t stream) {
    random_kernel<T><<<grid_for(n), 256, 0, stream>>>(dst, n, scale, seed);
    CUDA_CHECK_LAUNCH();
}

static void launch_fill(float* dst, int64_t n, float value, cudaStream_t stream) {
    fill_kernel<<<grid_for(n), 256, 0, stream>>>(dst, n, value);
    CUDA_CHECK_LAUNCH();
}

void convert_from_f32(const float* src, int64_t n, void* dst, DType dtype, cudaStream_t stream) {
    if (n <= 0) return;
    dispatch_dtype(dtype, [&]<typename T>() { launch_convert<T>(src, n, static_cast<T*>(dst), stream); });
}

void fill_random(void* dst, int64_t n, DType dtype, float scale, uint64_t seed, cudaStream_t stream) {
    if (n <= 0) return;
    dispatch_dtype(dtype, [&]<typename T>() { launch_random<T>(static_cast<T*>(dst), n, scale, seed, stream); });
}

void fill_f32(float* dst, int64_t n, float value, cudaStream_t stream) {
    if (n <= 0) return;
    launch_fill(dst, n, value, stream);
}

}  // namespace llamadesk::cuda
