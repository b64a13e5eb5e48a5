// Kernels for AVX2 + FMA + F16C (compiled with -mavx2 -mfma -mf16c; used only when the CPU has them).
#include <immintrin.h>

#include <array>
#include <climits>
#include <type_traits>
#include <utility>
#include <vector>

#include "backends/cpu/kernels.h"
#include "backends/cpu/in_order.h"
#include "backends/cpu/prefetch.h"
#include "model/quant/blocks.h"

namespace llamadesk::cpu {
namespace {

struct Simd {
    using V = __m256;
    static constexpr int W = 8;
    static constexpr int TM = 4;  // 4 x 3 tile: 12 accumulators + 3 weights + 1 activation = 16 registers
    static constexpr int TN = 3;
    static constexpr int PM = 4;  // the panel tile: 4 x 3 vectors, the same 16 registers (6 x 2: 80 GMAC/s against 90)
    static constexpr int PN = 3;
    static constexpr bool kDecodePrefetch = true;

    static V zero() { return _mm256_setzero_ps(); }
    static V set1(float a) { return _mm256_set1_ps(a); }
    static V load(const float* p) { return _mm256_loadu_ps(p); }
    static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
    static V load_f16(const uint16_t* p) {
        return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    }
    static V load_bf16(const uint16_t* p) {  // bf16 is the top half of an f32
        const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
        return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
    }
    static void store_f16(uint16_t* p, V v) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
    }
    static V load_i8(const int8_t* p) {
        return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
    }
    static float f16_scalar(uint16_t h) { return _cvtsh_ss(h); }
    static V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
    static V add(V a, V b) { return _mm256_add_ps(a, b); }
    static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
    static V div(V a, V b) { return _mm256_div_ps(a, b); }
    static V max(V a, V b) { return _mm256_max_ps(a, b); }
    static V min(V a, V b) { return _mm256_min_ps(a, b); }
    static V round(V a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
    static V pow2n(V n) {
        const __m256i e = _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127));
        return _mm256_castsi256_ps(_mm256_slli_epi32(e, 23));
    }
    static V select_gt(V a, V b, V x, V y) { return _mm256_blendv_ps(y, x, _mm256_cmp_ps(a, b, _CMP_GT_OQ)); }
    static float hsum(V v) {
        __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
        s = _mm_add_ps(s, _mm_movehl_ps(s, s));
        s = _mm_add_ss(s, _mm_movehdup_ps(s));
        return _mm_cvtss_f32(s);
    }
    static void hsum4(V a, V b, V c, V d, float* out) {
        const __m256 ab = _mm256_hadd_ps(a, b), cd = _mm256_hadd_ps(c, d);
        const __m256 abcd = _mm256_hadd_ps(ab, cd);  // per 128-bit half: sums of a, b, c, d
        _mm_storeu_ps(out, _mm_add_ps(_mm256_castps256_ps128(abcd), _mm256_extractf128_ps(abcd, 1)));
    }
    static float hmax(V v) {
        __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
        s = _mm_max_ps(s, _mm_movehl_ps(s, s));
        s = _mm_max_ss(s, _mm_movehdup_ps(s));
        return _mm_cvtss_f32(s);
    }
    // v[c] = column c of the 8 x 8 matrix whose row r was v[r]: interleaves of 32 and 64 bits
    // within 128-bit lanes, then one of the lanes.
    static void transpose(V (&v)[W]) {
        V t[W], u[W];
#pragma GCC unroll 4
        for (int i = 0; i < W; i += 2) {
            t[i] = _mm256_unpacklo_ps(v[i], v[i + 1]);
            t[i + 1] = _mm256_unpackhi_ps(v[i], v[i + 1]);
        }
#pragma GCC unroll 2
        for (int g = 0; g < W; g += 4) {  // u[g + m], lane L: column 4L + m of rows g .. g + 3
            u[g] = _mm256_shuffle_ps(t[g], t[g + 2], 0x44);
            u[g + 1] = _mm256_shuffle_ps(t[g], t[g + 2], 0xee);
            u[g + 2] = _mm256_shuffle_ps(t[g + 1], t[g + 3], 0x44);
            u[g + 3] = _mm256_shuffle_ps(t[g + 1], t[g + 3], 0xee);
        }
#pragma GCC unroll 4
        for (int m = 0; m < 4; ++m) {
            v[m] = _mm256_permute2f128_ps(u[m], u[4 + m], 0x20);
            v[4 + m] = _mm256_permute2f128_ps(u[m], u[4 + m], 0x31);
        }
    }
};

#include "backends/cpu/kernels_impl.h"

struct Int8Dot {
    static __m256i dot(__m256i acc, __m256i u, __m256i s) {
        return in_order(_mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1))));
    }
};
constexpr int kQuantTileRows = 4;  // 4 x 2 tile: 8 accumulators, 2 weight chunks and 2 scales of 16 registers
constexpr int kQuantTileCols = 2;

#include "backends/cpu/quant_kernels_x86.h"

}  // namespace

const Kernels& avx2_kernels() {
    static const Kernels kernels = with_quantized(make_kernels("avx2"));
    return kernels;
}

}  // namespace llamadesk::cpu
