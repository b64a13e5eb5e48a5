// SwiGLU: out = silu(gate) * up, elementwise, from the fused gate|up matrix product.
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/device_math.cuh"
#include "backends/cuda/kernels.h"

namespace llamadesk::cuda {

template <typename T>
static __global__ void swiglu_kernel(const float* __restrict__ gate_up,  // (n, 2 * hidden)
                                     int64_t total, int hidden,
                                     T* __restrict__ out) {               // (n, hidden)
    for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total;
         i += int64_t(gridDim.x) * blockDim.x) {
        const int64_t token = i / hidden, j = i % hidden;
        const float g = gate_up[token * 2 * hidden + j];
        const float u = gate_up[token * 2 * hidden + hidden + j];
        out[i] = from_float<T>(g / (1.0f + expf(-g)) * u);
    }
}

template <typename T>
static void launch_swiglu(const float* gate_up, int n, int hidden, T* out, cudaStream_t stream) {
    const int64_t total = int64_t(n) * hidden;
    const int blocks = int(std::min<int64_t>((total + 255) / 256, 65535));
    swiglu_kernel<T><<<blocks, 256, 0, stream>>>(gate_up, total, hidden, out);
    CUDA_CHECK_LAUNCH();
}

void swiglu(const float* gate_up, int n, int hidden, void* out, DType dtype, cudaStream_t stream) {
    if (n <= 0 || hidden <= 0) fail(ErrorCode::Internal, "swiglu: empty shape");
    dispatch_dtype(dtype, [&]<typename T>() {
        launch_swiglu<T>(gate_up, n, hidden, static_cast<T*>(out), stream);
    });
}

}  // namespace llamadesk::cuda
