// Kernels for AVX-512 F (compiled with -mavx512f; used only when the CPU has it). Compiled a second
// time as kernels_avx512vnni.cpp with LLAMADESK_CPU_VNNI for CPUs with AVX-512 VNNI, BW and VL,
// where the integer products of block types take one dpbusd and all 32 vector registers, and a
// third as kernels_amx.cpp with LLAMADESK_CPU_AMX too, where the prefill of the K-quants, F16 and
// BF16 takes tile products.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <climits>
#include <type_traits>
#include <utility>
#include <vector>

#include "backends/cpu/kernels.h"
#include "backends/cpu/in_order.h"
#include "backends/cpu/prefetch.h"
#include "core/cpu_features.h"
#include "model/quant/blocks.h"

namespace llamadesk::cpu {
namespace {

struct Simd {
    using V = __m512;
    static constexpr int W = 16;
    static constexpr int TM = 4;  // 4 x 6 tile: 24 accumulators + 6 weights + 1 activation of 32 registers
    static constexpr int TN = 6;
    static constexpr int PM = 8;  // the panel tile: 8 x 3 vectors, 24 accumulators + 3 weights + 1 activation
    static constexpr int PN = 3;
    static constexpr bool kDecodePrefetch = true;

    static V zero() { return _mm512_setzero_ps(); }
    static V set1(float a) { return _mm512_set1_ps(a); }
    static V load(const float* p) { return _mm512_loadu_ps(p); }
    static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
    static V load_f16(const uint16_t* p) {
        return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    }
    static void store_f16(uint16_t* p, V v) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
    }
    static V load_i8(const int8_t* p) {
        return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
    }
    static V load_bf16(const uint16_t* p) {  // bf16 is the top half of an f32
        const __m512i wide = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
        return _mm512_castsi512_ps(_mm512_slli_epi32(wide, 16));
    }
    static float f16_scalar(uint16_t h) { return _cvtsh_ss(h); }
    static V fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
    static V add(V a, V b) { return _mm512_add_ps(a, b); }
    static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
    static V div(V a, V b) { return _mm512_div_ps(a, b); }
    static V max(V a, V b) { return _mm512_max_ps(a, b); }
    static V min(V a, V b) { return _mm512_min_ps(a, b); }
    static V round(V a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
    static V pow2n(V n) {
        const __m512i e = _mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127));
        return _mm512_castsi512_ps(_mm512_slli_epi32(e, 23));
    }
    static V select_gt(V a, V b, V x, V y) {
        return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, b, _CMP_GT_OQ), y, x);
    }
    static float hsum(V v) { return _mm512_reduce_add_ps(v); }
    static __m256 half_sum(V v) {
        return _mm256_add_ps(_mm512_castps512_ps256(v), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
    }
    static void hsum4(V a, V b, V c, V d, float* out) {
        const __m256 ab = _mm256_hadd_ps(half_sum(a), half_sum(b)), cd = _mm256_hadd_ps(half_sum(c), half_sum(d));
        const __m256 abcd = _mm256_hadd_ps(ab, cd);
        _mm_storeu_ps(out, _mm_add_ps(_mm256_castps256_ps128(abcd), _mm256_extractf128_ps(abcd, 1)));
    }
    static float hmax(V v) { return _mm512_reduce_max_ps(v); }
    // v[c] = column c of the 16 x 16 matrix whose row r was v[r]: interleaves of 32 and 64 bits
    // within 128-bit lanes, then two rounds of 128-bit lanes.
    static void transpose(V (&v)[W]) {
        V t[W], u[W];
#pragma GCC unroll 8
        for (int i = 0; i < W; i += 2) {
            t[i] = _mm512_unpacklo_ps(v[i], v[i + 1]);
            t[i + 1] = _mm512_unpackhi_ps(v[i], v[i + 1]);
        }
#pragma GCC unroll 4
        for (int g = 0; g < W; g += 4) {  // u[g + m], lane L: column 4L + m of rows g .. g + 3
            u[g] = _mm512_shuffle_ps(t[g], t[g + 2], 0x44);
            u[g + 1] = _mm512_shuffle_ps(t[g], t[g + 2], 0xee);
            u[g + 2] = _mm512_shuffle_ps(t[g + 1], t[g + 3], 0x44);
            u[g + 3] = _mm512_shuffle_ps(t[g + 1], t[g + 3], 0xee);
        }
#pragma GCC unroll 4
        for (int m = 0; m < 4; ++m) {
            t[m] = _mm512_shuffle_f32x4(u[m], u[4 + m], 0x88);
            t[4 + m] = _mm512_shuffle_f32x4(u[m], u[4 + m], 0xdd);
            t[8 + m] = _mm512_shuffle_f32x4(u[8 + m], u[12 + m], 0x88);
            t[12 + m] = _mm512_shuffle_f32x4(u[8 + m], u[12 + m], 0xdd);
        }
#pragma GCC unroll 4
        for (int m = 0; m < 4; ++m) {
            v[m] = _mm512_shuffle_f32x4(t[m], t[8 + m], 0x88);
            v[8 + m] = _mm512_shuffle_f32x4(t[m], t[8 + m], 0xdd);
            v[4 + m] = _mm512_shuffle_f32x4(t[4 + m], t[12 + m], 0x88);
            v[12 + m] = _mm512_shuffle_f32x4(t[4 + m], t[12 + m], 0xdd);
        }
    }
};

#include "backends/cpu/kernels_impl.h"

#if defined(LLAMADESK_CPU_VNNI)
constexpr int kQuantTileRows = 4;  // 4 x 4 tile: 16 accumulators, 4 weight chunks and 4 scales of 32 registers
constexpr int kQuantTileCols = 4;
#else
struct Int8Dot {  // without VL the integer code has only the 16 AVX2 registers
    static __m256i dot(__m256i acc, __m256i u, __m256i s) {
        return in_order(_mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1))));
    }
};
constexpr int kQuantTileRows = 4;
constexpr int kQuantTileCols = 2;
#endif

#include "backends/cpu/quant_kernels_x86.h"

}  // namespace

#if defined(LLAMADESK_CPU_AMX)
const Kernels& amx_kernels() {
    static const Kernels kernels = with_amx(with_quantized(make_kernels("amx")));
    return kernels;
}
#elif defined(LLAMADESK_CPU_VNNI)
const Kernels& avx512vnni_kernels() {
    static const Kernels kernels = with_quantized(make_kernels("avx512vnni"));
    return kernels;
}
#else
const Kernels& avx512_kernels() {
    static const Kernels kernels = with_quantized(make_kernels("avx512"));
    return kernels;
}
#endif

}  // namespace llamadesk::cpu
