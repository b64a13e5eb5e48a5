// The kernels every block type shares, instantiated by the type's own file in this folder. A type
// describes its blocks as groups of kGroup consecutive elements, each with one affine map
//   value[i] = scale * q[i] + offset
// (Q6_K's groups are its sub-blocks of 16 elements, the others' 32), so the GEMV multiplies the
// small integers with x and applies the scale once per group. A type is a struct with:
//   static constexpr int kBlockElements, kBlockBytes, kGroup;  static constexpr bool kHasOffset;
//   __device__ static void group(const uint8_t* block, int g, float (&q)[kGroup],
//                                float& scale, float& offset);   // g < kBlockElements / kGroup
// `block` may sit at any even address (every field of every layout is at an even offset).
#pragma once

#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/device_math.cuh"
#include "backends/cuda/weight_kernels.h"
#include "model/quant/blocks.h"

namespace llamadesk::cuda::quant_kernels {

constexpr int kGemvWarps = 4;          // rows per thread block, one warp each
constexpr int kChunkElements = 4096;   // of a row staged in shared memory at once (a 7B row of dim)

__device__ __forceinline__ float f16_at(const uint8_t* p) {
    return __half2float(__ushort_as_half(*reinterpret_cast<const uint16_t*>(p)));
}

// Bytes 2i and 2i + 1 of an even address, read as one 16-bit word.
__device__ __forceinline__ uint32_t pair_at(const uint8_t* p, int i) {
    return reinterpret_cast<const uint16_t*>(p)[i];
}

// float(u) - bias for u < 2^23 and a small whole bias, without an integer-to-float conversion
// (a quarter-rate instruction that would bound the 4-bit GEMV): u placed in the mantissa of
// 2^23, then 2^23 + bias subtracted, both exact.
__device__ __forceinline__ float small_int(uint32_t u, float bias) {
    return __uint_as_float(0x4b000000u | u) - (8388608.0f + bias);
}

// Sum over group g of the block of value * x; x (kGroup,) F16, 16-byte aligned.
template <class Q>
__device__ __forceinline__ float group_dot(const uint8_t* block, int g, const __half* x) {
    float q[Q::kGroup], scale, offset;
    Q::group(block, g, q, scale, offset);
    const int4* x16 = reinterpret_cast<const int4*>(x);
    float qx = 0.0f, sx = 0.0f;
#pragma unroll
    for (int v = 0; v < Q::kGroup / 8; ++v) {
        const int4 raw = __ldg(x16 + v);
        const __half2* h = reinterpret_cast<const __half2*>(&raw);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const float2 xf = __half22float2(h[i]);
            qx += q[8 * v + 2 * i] * xf.x + q[8 * v + 2 * i + 1] * xf.y;
            if constexpr (Q::kHasOffset) sx += xf.x + xf.y;
        }
    }
    return Q::kHasOffset ? scale * qx + offset * sx : scale * qx;
}

// One warp per row. Blocks are not 16-byte multiples (Q8_0's 34 bytes, Q6_K's 210), so a warp
// copies a chunk of its row into shared memory with coalesced 16-byte streaming loads from the
// 16-byte word below the chunk's start, then each lane decodes whole groups from there (lane i
// takes groups i, i + 32, ...: neighbouring lanes read neighbouring bytes and x).
template <class Q>
static __global__ void __launch_bounds__(kGemvWarps * 32)
gemv_blocks_kernel(const uint8_t* __restrict__ w,  // (rows, cols / kBlockElements blocks)
                   const __half* __restrict__ x,   // (cols,)
                   int rows, int cols, bool accumulate,
                   float* __restrict__ y) {        // (rows,)
    constexpr int kGroups = Q::kBlockElements / Q::kGroup;
    constexpr int kChunkBlocks = kChunkElements / Q::kBlockElements;
    constexpr int kWords = (kChunkBlocks * Q::kBlockBytes + 15) / 16 + 1;  // + 1: a skewed start
    constexpr int kWordsPerLane = (kWords + 31) / 32;
    __shared__ int4 staged[kGemvWarps][kWords];

    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int row = blockIdx.x * kGemvWarps + warp;
    if (row >= rows) return;
    const int n_blocks = cols / Q::kBlockElements;
    const uint8_t* row_bytes = w + int64_t(row) * n_blocks * Q::kBlockBytes;
    float sum = 0.0f;
    for (int b0 = 0; b0 < n_blocks; b0 += kChunkBlocks) {
        const int nb = min(kChunkBlocks, n_blocks - b0);
        const uint8_t* begin = row_bytes + int64_t(b0) * Q::kBlockBytes;
        const int skew = int(reinterpret_cast<uintptr_t>(begin) % 16);
        const int4* src = reinterpret_cast<const int4*>(begin - skew);
        const int n_words = (skew + nb * Q::kBlockBytes + 15) / 16;
        // all loads first, so each lane has several in flight
        int4 words[kWordsPerLane];
#pragma unroll
        for (int k = 0; k < kWordsPerLane; ++k)
            if (lane + 32 * k < n_words) words[k] = __ldcs(src + lane + 32 * k);
        __syncwarp();  // every lane is done with the previous chunk
#pragma unroll
        for (int k = 0; k < kWordsPerLane; ++k)
            if (lane + 32 * k < n_words) staged[warp][lane + 32 * k] = words[k];
        __syncwarp();
        const uint8_t* blocks = reinterpret_cast<const uint8_t*>(staged[warp]) + skew;
        const __half* xc = x + int64_t(b0) * Q::kBlockElements;
        for (int g = lane; g < nb * kGroups; g += 32)
            sum += group_dot<Q>(blocks + (g / kGroups) * Q::kBlockBytes, g % kGroups, xc + g * Q::kGroup);
    }
    sum = warp_sum(sum);
    if (lane == 0) y[row] = accumulate ? y[row] + sum : sum;
}

template <typename Out> __device__ __forceinline__ void store_group(Out* dst, const float* v, int n);
// F16: pairs packed into 16-byte stores (dst is 16-byte aligned: groups are 16 or 32 elements)
template <> __device__ __forceinline__ void store_group<__half>(__half* dst, const float* v, int n) {
    for (int i = 0; i < n; i += 8) {
        __half2 h[4];
#pragma unroll
        for (int j = 0; j < 4; ++j) h[j] = __floats2half2_rn(v[i + 2 * j], v[i + 2 * j + 1]);
        *reinterpret_cast<int4*>(dst + i) = *reinterpret_cast<const int4*>(h);
    }
}
template <> __device__ __forceinline__ void store_group<float>(float* dst, const float* v, int n) {
    for (int i = 0; i < n; i += 4)
        *reinterpret_cast<float4*>(dst + i) = make_float4(v[i], v[i + 1], v[i + 2], v[i + 3]);
}

// out (n_rows, cols) = rows of w widened, one group per thread; row i is row_ids[i] of w (clamped
// to [0, vocab): the host checked the tokens) when row_ids is given, else row i.
template <class Q, typename Out>
static __global__ void dequantize_kernel(const uint8_t* __restrict__ w, const int32_t* __restrict__ row_ids,
                                         int vocab, int n_rows, int cols, Out* __restrict__ out) {
    constexpr int kGroups = Q::kBlockElements / Q::kGroup;
    const int64_t groups_per_row = cols / Q::kGroup;
    const int64_t row_stride = int64_t(cols / Q::kBlockElements) * Q::kBlockBytes;
    const int64_t total = int64_t(n_rows) * groups_per_row;
    for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total;
         i += int64_t(gridDim.x) * blockDim.x) {
        const int64_t r = i / groups_per_row;
        const int g = int(i % groups_per_row);
        int64_t src = r;
        if (row_ids) {
            const int32_t t = row_ids[r];
            src = t < 0 || t >= vocab ? 0 : t;
        }
        float q[Q::kGroup], scale, offset;
        Q::group(w + src * row_stride + int64_t(g / kGroups) * Q::kBlockBytes, g % kGroups, q, scale, offset);
#pragma unroll
        for (int j = 0; j < Q::kGroup; ++j) q[j] = scale * q[j] + offset;
        store_group<Out>(out + r * cols + int64_t(g) * Q::kGroup, q, Q::kGroup);
    }
}

inline void check_shape(const char* what, int rows, int cols, int block_elements) {
    if (rows <= 0 || cols <= 0 || cols % block_elements != 0)
        fail(ErrorCode::Internal, std::string(what) + ": " + std::to_string(cols) +
                                      " columns are not whole blocks of " + std::to_string(block_elements));
}

inline bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

template <class Q>
void launch_gemv(const void* w, const void* x, int rows, int cols, float* y, bool accumulate,
                 cudaStream_t stream) {
    check_shape("gemv", rows, cols, Q::kBlockElements);
    if (!aligned16(w) || !aligned16(x)) fail(ErrorCode::Internal, "gemv: blocks and x must be 16-byte aligned");
    gemv_blocks_kernel<Q><<<ceil_div(rows, kGemvWarps), kGemvWarps * 32, 0, stream>>>(
        static_cast<const uint8_t*>(w), static_cast<const __half*>(x), rows, cols, accumulate, y);
    CUDA_CHECK_LAUNCH();
}

template <class Q, typename Out>
void launch_dequantize(const void* w, const int32_t* row_ids, int vocab, int n_rows, int cols, void* out,
                       cudaStream_t stream) {
    check_shape("dequantize", n_rows, cols, Q::kBlockElements);
    const int64_t groups = int64_t(n_rows) * (cols / Q::kGroup);
    const int grid = int(std::min<int64_t>((groups + 255) / 256, 65535));
    dequantize_kernel<Q, Out><<<grid, 256, 0, stream>>>(static_cast<const uint8_t*>(w), row_ids, vocab, n_rows,
                                                        cols, static_cast<Out*>(out));
    CUDA_CHECK_LAUNCH();
}

}  // namespace llamadesk::cuda::quant_kernels

// The three launchers weight_kernels.h declares for type t, described by struct Q.
#define LLAMADESK_CUDA_DEFINE_BLOCK_TYPE(t, Q)                                                     \
    void gemv_##t(const void* w, const void* x, int rows, int cols, float* y, bool accumulate,      \
                  cudaStream_t stream) {                                                           \
        quant_kernels::launch_gemv<Q>(w, x, rows, cols, y, accumulate, stream);                    \
    }                                                                                              \
    void to_f16_##t(const void* w, int rows, int cols, void* out, cudaStream_t stream) {           \
        quant_kernels::launch_dequantize<Q, __half>(w, nullptr, 0, rows, cols, out, stream);       \
    }                                                                                              \
    void embed_##t(const int32_t* tokens, int n, const void* table, int vocab, int cols, float* x, \
                   cudaStream_t stream) {                                                          \
        quant_kernels::launch_dequantize<Q, float>(table, tokens, vocab, n, cols, x, stream);      \
    }
