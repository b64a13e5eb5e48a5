// Device-side helpers shared by the kernels: element conversions and warp/block reductions.
// Included by .cu files only.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cfloat>
#include <string>

#include "core/error.h"
#include "model/weight_types.h"

namespace llamadesk::cuda {

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }

template <typename T> __device__ __forceinline__ T from_float(float x);
template <> __device__ __forceinline__ float from_float<float>(float x) { return x; }
template <> __device__ __forceinline__ __half from_float<__half>(float x) { return __float2half_rn(x); }
template <> __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) {
    return __float2bfloat16_rn(x);
}

__device__ __forceinline__ float warp_sum(float x) {
    for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
    return x;
}

__device__ __forceinline__ float warp_max(float x) {
    for (int o = 16; o > 0; o >>= 1) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, o));
    return x;
}

// Reductions over the whole block (blockDim.x a multiple of 32, at most 1024); every thread
// gets the result.
template <bool kMax>
__device__ __forceinline__ float block_reduce(float x) {
    __shared__ float partial[32];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, n_warps = blockDim.x / 32;
    x = kMax ? warp_max(x) : warp_sum(x);
    __syncthreads();  // partial may still be read by a previous call
    if (lane == 0) partial[warp] = x;
    __syncthreads();
    x = lane < n_warps ? partial[lane] : (kMax ? -INFINITY : 0.0f);
    return kMax ? warp_max(x) : warp_sum(x);
}
__device__ __forceinline__ float block_sum(float x) { return block_reduce<false>(x); }
__device__ __forceinline__ float block_max(float x) { return block_reduce<true>(x); }

// Calls f.template operator()<T>() with T the device element type of dtype.
template <typename F>
void dispatch_dtype(DType dtype, F&& f) {
    switch (dtype) {
    case DType::F32: f.template operator()<float>(); return;
    case DType::F16: f.template operator()<__half>(); return;
    case DType::BF16: f.template operator()<__nv_bfloat16>(); return;
    default: break;  // block types have their own kernels (weight_kernels.h)
    }
    fail(ErrorCode::Internal, std::string("no plain-float CUDA kernel for ") + dtype_name(dtype));
}

// The same for the KV cache, which is F16 or F32 (see cuda_backend.cpp).
template <typename F>
void dispatch_kv_dtype(DType dtype, F&& f) {
    switch (dtype) {
    case DType::F32: f.template operator()<float>(); return;
    case DType::F16: f.template operator()<__half>(); return;
    default: break;
    }
    fail(ErrorCode::Internal, std::string("no CUDA kernels for a KV cache in ") + dtype_name(dtype));
}

inline int ceil_div(int64_t a, int64_t b) { return int((a + b - 1) / b); }

}  // namespace llamadesk::cuda
