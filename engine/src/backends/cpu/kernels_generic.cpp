// Portable kernels: the same bodies over plain 8-float arrays (the compiler vectorizes what it can
// for the baseline instruction set). Used on CPUs without AVX2.
#include "backends/cpu/kernels.h"
#include "backends/cpu/prefetch.h"

#include <algorithm>
#include <utility>
#include <cmath>
#include <cstring>
#include <vector>

#include "model/dtype.h"
#include "model/quant/blocks.h"

namespace llamadesk::cpu {
namespace {

struct Simd {
    struct V {
        float v[8];
    };
    static constexpr int W = 8;
    static constexpr int TM = 4;
    static constexpr int TN = 2;
    static constexpr int PM = 4;
    static constexpr int PN = 2;
    // its decode is bound by its arithmetic: asking ahead slowed BF16 from 13 to 9.4 GB/s
    static constexpr bool kDecodePrefetch = false;

    template <class F>
    static V each(F f) {
        V r;
        for (int i = 0; i < W; ++i) r.v[i] = f(i);
        return r;
    }
    static V zero() { return set1(0.0f); }
    static V set1(float a) { return each([&](int) { return a; }); }
    static V load(const float* p) { return each([&](int i) { return p[i]; }); }
    static void store(float* p, V a) { for (int i = 0; i < W; ++i) p[i] = a.v[i]; }
    static V load_f16(const uint16_t* p) { return each([&](int i) { return f16_to_f32(p[i]); }); }
    static V load_bf16(const uint16_t* p) { return each([&](int i) { return bf16_to_f32(p[i]); }); }
    static void store_f16(uint16_t* p, V a) { for (int i = 0; i < W; ++i) p[i] = f32_to_f16(a.v[i]); }
    static V load_i8(const int8_t* p) { return each([&](int i) { return float(p[i]); }); }
    static float f16_scalar(uint16_t h) { return f16_to_f32(h); }
    static V fma(V a, V b, V c) { return each([&](int i) { return a.v[i] * b.v[i] + c.v[i]; }); }
    static V add(V a, V b) { return each([&](int i) { return a.v[i] + b.v[i]; }); }
    static V mul(V a, V b) { return each([&](int i) { return a.v[i] * b.v[i]; }); }
    static V div(V a, V b) { return each([&](int i) { return a.v[i] / b.v[i]; }); }
    static V max(V a, V b) { return each([&](int i) { return a.v[i] > b.v[i] ? a.v[i] : b.v[i]; }); }
    static V min(V a, V b) { return each([&](int i) { return a.v[i] < b.v[i] ? a.v[i] : b.v[i]; }); }
    static V round(V a) { return each([&](int i) { return __builtin_nearbyintf(a.v[i]); }); }
    static V pow2n(V n) {
        return each([&](int i) {
            const uint32_t bits = uint32_t(int32_t(n.v[i]) + 127) << 23;
            float f;
            __builtin_memcpy(&f, &bits, 4);
            return f;
        });
    }
    static V select_gt(V a, V b, V x, V y) { return each([&](int i) { return a.v[i] > b.v[i] ? x.v[i] : y.v[i]; }); }
    static float hsum(V a) {
        float s = 0.0f;
        for (int i = 0; i < W; ++i) s += a.v[i];
        return s;
    }
    static void hsum4(V a, V b, V c, V d, float* out) {
        out[0] = hsum(a);
        out[1] = hsum(b);
        out[2] = hsum(c);
        out[3] = hsum(d);
    }
    static float hmax(V a) {
        float m = a.v[0];
        for (int i = 1; i < W; ++i) m = a.v[i] > m ? a.v[i] : m;
        return m;
    }
    static void transpose(V (&v)[W]) {
        for (int r = 0; r < W; ++r)
            for (int c = r + 1; c < W; ++c) std::swap(v[r].v[c], v[c].v[r]);
    }
};

#include "backends/cpu/kernels_impl.h"

// Block types, scalar: the same reading as the SIMD sets (quant_kernels_x86.h), chunks of 32
// integers q with weight = scale * q + offset, the scale per half of 16.
struct Chunk {
    int q[32];
    float lo, hi, offset;
};

using quant::unpack_k_scale;

void nibbles(const uint8_t* qs, int* q) {
    for (int l = 0; l < 16; ++l) {
        q[l] = qs[l] & 15;
        q[l + 16] = qs[l] >> 4;
    }
}

void add_fifth_bits(const uint8_t* qh, int* q) {
    uint32_t bits;
    std::memcpy(&bits, qh, 4);
    for (int l = 0; l < 32; ++l) q[l] |= int((bits >> l) & 1) << 4;
}

void decode(const quant::BlockQ8_0& b, int, Chunk& c) {
    for (int l = 0; l < 32; ++l) c.q[l] = b.qs[l];
    c.lo = c.hi = f16_to_f32(b.d);
    c.offset = 0.0f;
}

void decode(const quant::BlockQ4_0& b, int, Chunk& c) {
    nibbles(b.qs, c.q);
    c.lo = c.hi = f16_to_f32(b.d);
    c.offset = -8.0f * c.lo;
}

void decode(const quant::BlockQ4_1& b, int, Chunk& c) {
    nibbles(b.qs, c.q);
    c.lo = c.hi = f16_to_f32(b.d);
    c.offset = f16_to_f32(b.m);
}

void decode(const quant::BlockQ5_0& b, int, Chunk& c) {
    nibbles(b.qs, c.q);
    add_fifth_bits(b.qh, c.q);
    c.lo = c.hi = f16_to_f32(b.d);
    c.offset = -16.0f * c.lo;
}

void decode(const quant::BlockQ5_1& b, int, Chunk& c) {
    nibbles(b.qs, c.q);
    add_fifth_bits(b.qh, c.q);
    c.lo = c.hi = f16_to_f32(b.d);
    c.offset = f16_to_f32(b.m);
}

template <class B>
void k_scales(const B& b, int j, Chunk& c) {
    uint8_t scale, min;
    unpack_k_scale(b.scales, j, scale, min);
    c.lo = c.hi = f16_to_f32(b.d) * float(scale);
    c.offset = -f16_to_f32(b.dmin) * float(min);
}

void decode(const quant::BlockQ4_K& b, int j, Chunk& c) {
    const uint8_t* qs = b.qs + 32 * (j / 2);
    for (int l = 0; l < 32; ++l) c.q[l] = (qs[l] >> (4 * (j % 2))) & 15;
    k_scales(b, j, c);
}

void decode(const quant::BlockQ5_K& b, int j, Chunk& c) {
    const uint8_t* qs = b.qs + 32 * (j / 2);
    for (int l = 0; l < 32; ++l) c.q[l] = ((qs[l] >> (4 * (j % 2))) & 15) | ((b.qh[l] >> j) & 1) << 4;
    k_scales(b, j, c);
}

void decode(const quant::BlockQ6_K& b, int j, Chunk& c) {
    const int h = j / 4, part = j % 4;
    const uint8_t* ql = b.ql + 64 * h + 32 * (part % 2);
    const uint8_t* qh = b.qh + 32 * h;
    for (int l = 0; l < 32; ++l)
        c.q[l] = (((ql[l] >> (4 * (part / 2))) & 15) | ((qh[l] >> (2 * part)) & 3) << 4) - 32;
    const float d = f16_to_f32(b.d);
    c.lo = d * float(b.scales[2 * j]);
    c.hi = d * float(b.scales[2 * j + 1]);
    c.offset = 0.0f;
}

// Each chunk is decoded once per weight row and used by all n activation rows.
template <class B, int kChunks>
void quantized_gemm(const QuantizedRows& x, int n, const void* weights, int64_t ldw, int rows, int k, float* y,
                    int64_t ldy) {
    const int64_t n_chunks = k / 32;
    std::vector<float> acc(static_cast<size_t>(n));
    for (int r = 0; r < rows; ++r) {
        const auto* row = reinterpret_cast<const B*>(static_cast<const uint8_t*>(weights) + r * ldw);
        std::fill(acc.begin(), acc.end(), 0.0f);
        for (int64_t c = 0; c < n_chunks; ++c) {
            Chunk chunk;
            decode(row[c / kChunks], int(c % kChunks), chunk);
            for (int t = 0; t < n; ++t) {
                const int8_t* a = x.q + t * x.k + 32 * c;
                int lo = 0, hi = 0;
                for (int l = 0; l < 16; ++l) {
                    lo += chunk.q[l] * a[l];
                    hi += chunk.q[l + 16] * a[l + 16];
                }
                const int64_t at = t * (x.k / 32) + c;
                acc[size_t(t)] += x.d[at] * (chunk.lo * float(lo) + chunk.hi * float(hi)) + chunk.offset * x.d_sum[at];
            }
        }
        for (int t = 0; t < n; ++t) y[t * ldy + r] = acc[size_t(t)];
    }
}

void quantize_rows(const float* x, int64_t ldx, int n, int64_t k, int8_t* q, float* d, float* d_sum,
                   int32_t* half_sums) {
    for (int t = 0; t < n; ++t)
        for (int64_t b = 0; b < k / 32; ++b) {
            const float* src = x + t * ldx + 32 * b;
            float amax = 0.0f;
            for (int l = 0; l < 32; ++l) amax = std::max(amax, std::fabs(src[l]));
            const float inv = amax > 0.0f ? 127.0f / amax : 0.0f;
            int sum[2] = {0, 0};
            for (int l = 0; l < 32; ++l) {
                const int v = int(std::nearbyint(src[l] * inv));
                q[t * k + 32 * b + l] = int8_t(v);
                sum[l / 16] += v;
            }
            d[t * (k / 32) + b] = amax / 127.0f;
            d_sum[t * (k / 32) + b] = amax / 127.0f * float(sum[0] + sum[1]);
            int32_t* halves = half_sums + t * (k / 8) + 4 * b;
            halves[0] = sum[0];
            halves[1] = 0;
            halves[2] = sum[1];
            halves[3] = 0;
        }
}

Kernels with_quantized(Kernels k) {
    auto set = [&](DType t, QuantizedGemmFn f) { k.types[int(t)].quantized_gemm = f; };
    set(DType::Q8_0, &quantized_gemm<quant::BlockQ8_0, 1>);
    set(DType::Q4_0, &quantized_gemm<quant::BlockQ4_0, 1>);
    set(DType::Q4_1, &quantized_gemm<quant::BlockQ4_1, 1>);
    set(DType::Q5_0, &quantized_gemm<quant::BlockQ5_0, 1>);
    set(DType::Q5_1, &quantized_gemm<quant::BlockQ5_1, 1>);
    set(DType::Q4_K, &quantized_gemm<quant::BlockQ4_K, 8>);
    set(DType::Q5_K, &quantized_gemm<quant::BlockQ5_K, 8>);
    set(DType::Q6_K, &quantized_gemm<quant::BlockQ6_K, 8>);
    k.quantize_rows = &quantize_rows;
    // the block types' dots are plain multiply-adds here too
    k.peak_probe = [](Kernels::Multiply, int64_t iterations) { return float_peak_probe(iterations); };
    return k;
}

}  // namespace

const Kernels& generic_kernels() {
    static const Kernels kernels = with_quantized(make_kernels("generic"));
    return kernels;
}

}  // namespace llamadesk::cpu
