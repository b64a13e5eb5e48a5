// RMSNorm: one block per row. The residual add that precedes it in the layer is already done by
// the matrix product before it (which accumulates into the residual stream), so no fusion is
// needed here. Output in the weights' dtype, ready for the next matrix product.
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/device_math.cuh"
#include "backends/cuda/kernels.h"

namespace llamadesk::cuda {

template <typename T>
static __global__ void rmsnorm_kernel(const float* __restrict__ x,       // (n, dim)
                                      const float* __restrict__ weight,  // (dim,)
                                      int dim, float eps,
                                      T* __restrict__ out) {              // (n, dim)
    const float* row = x + int64_t(blockIdx.x) * dim;
    float ss = 0.0f;
    for (int d = threadIdx.x; d < dim; d += blockDim.x) ss += row[d] * row[d];
    ss = block_sum(ss);
    const float scale = 1.0f / sqrtf(ss / float(dim) + eps);
    T* o = out + int64_t(blockIdx.x) * dim;
    for (int d = threadIdx.x; d < dim; d += blockDim.x) o[d] = from_float<T>(weight[d] * (scale * row[d]));
}

template <typename T>
static void launch_rmsnorm(const float* x, const float* weight, int n, int dim, float eps, T* out,
                           cudaStream_t stream) {
    const int threads = dim >= 1024 ? 1024 : ((dim + 31) / 32) * 32;
    rmsnorm_kernel<T><<<n, threads, 0, stream>>>(x, weight, dim, eps, out);
    CUDA_CHECK_LAUNCH();
}

void rmsnorm(const float* x, const float* weight, int n, int dim, float eps, void* out,
             DType out_dtype, cudaStream_t stream) {
    if (n <= 0 || dim <= 0) fail(ErrorCode::Internal, "rmsnorm: empty shape");
    dispatch_dtype(out_dtype, [&]<typename T>() {
        launch_rmsnorm<T>(x, weight, n, dim, eps, static_cast<T*>(out), stream);
    });
}

}  // namespace llamadesk::cuda
