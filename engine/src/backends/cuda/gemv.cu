// Matrix-vector product for single-token decode, where streaming the weights is the whole cost:
// one warp per row, 16-byte loads that bypass L1 for the weights (each byte is read once), and
// the (small) input vector read through the cache by every warp.
#include <algorithm>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/device_math.cuh"
#include "backends/cuda/kernels.h"

namespace llamadesk::cuda {

constexpr int kGemvWarps = 4;  // rows per block

// Dot product of 16 bytes of weights with 16 bytes of input, both of type T.
template <typename T> __device__ __forceinline__ float dot16(int4 a, int4 b);
template <> __device__ __forceinline__ float dot16<float>(int4 a, int4 b) {
    return __int_as_float(a.x) * __int_as_float(b.x) + __int_as_float(a.y) * __int_as_float(b.y) +
           __int_as_float(a.z) * __int_as_float(b.z) + __int_as_float(a.w) * __int_as_float(b.w);
}

template <typename T> struct Pair;  // two values of a 16-bit type
template <> struct Pair<__half> { using type = __half2; };
template <> struct Pair<__nv_bfloat16> { using type = __nv_bfloat162; };
__device__ __forceinline__ float2 widen(__half2 v) { return __half22float2(v); }
__device__ __forceinline__ float2 widen(__nv_bfloat162 v) { return __bfloat1622float2(v); }

// F16 and BF16: eight 16-bit values, widened pairwise
template <typename T> __device__ __forceinline__ float dot16(int4 a, int4 b) {
    using T2 = typename Pair<T>::type;
    const T2* w = reinterpret_cast<const T2*>(&a);
    const T2* x = reinterpret_cast<const T2*>(&b);
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const float2 wf = widen(w[i]), xf = widen(x[i]);
        s += wf.x * xf.x + wf.y * xf.y;
    }
    return s;
}

// VEC: rows are 16-byte aligned (cols a multiple of 16 / sizeof(T)), so 16-byte loads are used.
template <typename T, bool VEC>
static __global__ void __launch_bounds__(kGemvWarps * 32)
gemv_kernel(const T* __restrict__ w,  // (rows, cols)
            const T* __restrict__ x,  // (cols,)
            int rows, int cols, bool accumulate,
            float* __restrict__ y) {  // (rows,)
    const int lane = threadIdx.x % 32;
    const int row = blockIdx.x * kGemvWarps + threadIdx.x / 32;
    if (row >= rows) return;
    const T* wr = w + int64_t(row) * cols;
    float sum = 0.0f;
    if constexpr (VEC) {
        constexpr int kPer16 = 16 / sizeof(T);
        const int4* w16 = reinterpret_cast<const int4*>(wr);
        const int4* x16 = reinterpret_cast<const int4*>(x);
        const int n16 = cols / kPer16;
#pragma unroll 4
        for (int i = lane; i < n16; i += 32) sum += dot16<T>(__ldcs(w16 + i), __ldg(x16 + i));
    } else {
        for (int i = lane; i < cols; i += 32) sum += to_float(wr[i]) * to_float(x[i]);
    }
    sum = warp_sum(sum);
    if (lane == 0) y[row] = accumulate ? y[row] + sum : sum;
}

template <typename T>
static void launch_gemv(const T* w, const T* x, int rows, int cols, float* y, bool accumulate,
                        cudaStream_t stream) {
    const int blocks = ceil_div(rows, kGemvWarps);
    const bool aligned = cols % (16 / sizeof(T)) == 0 && reinterpret_cast<uintptr_t>(w) % 16 == 0 &&
                         reinterpret_cast<uintptr_t>(x) % 16 == 0;
    if (aligned)
        gemv_kernel<T, true><<<blocks, kGemvWarps * 32, 0, stream>>>(w, x, rows, cols, accumulate, y);
    else
        gemv_kernel<T, false><<<blocks, kGemvWarps * 32, 0, stream>>>(w, x, rows, cols, accumulate, y);
    CUDA_CHECK_LAUNCH();
}

void gemv(const void* w, const void* x, DType dtype, int rows, int cols, float* y, bool accumulate,
          cudaStream_t stream) {
    if (rows <= 0 || cols <= 0) fail(ErrorCode::Internal, "gemv: empty shape");
    dispatch_dtype(dtype, [&]<typename T>() {
        launch_gemv<T>(static_cast<const T*>(w), static_cast<const T*>(x), rows, cols, y,
                       accumulate, stream);
    });
}

}  // namespace llamadesk::cuda
