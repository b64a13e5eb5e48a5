// The kernel bodies, written once over a small SIMD vocabulary `Simd` that each kernels_<isa>.cpp
// defines before including this file inside an anonymous namespace (so nothing here is shared
// between files compiled with different instruction sets).
//
// Simd provides: V (a vector of W floats), TM x TN (the GEMM micro-tile: activation rows x weight
// rows), PM x PN (float_panels.h's tile: activation rows x vectors of weight rows), kDecodePrefetch
// (whether gemv asks for bytes ahead), zero, set1, load, store, load_f16, store_f16, load_bf16, load_i8 (W int8 as floats), f16_scalar, fma, add, mul, div, max, min,
// round, pow2n (2^n for whole n), hsum, hsum4 (four sums at once), hmax, transpose (W vectors as a
// W x W matrix, in place).
//
// GEMM layout: both x (n, k) and w (rows, k) are contiguous along k, so each output is a dot
// product. A TM x TN tile keeps TM*TN vector accumulators in registers and, per step of W
// elements, loads TM activation vectors and TN weight vectors: every weight vector loaded feeds TM
// FMAs, which is what makes prefill compute-bound rather than memory-bound.

enum class WeightKind { F32, F16, BF16 };

template <WeightKind K> struct WeightElement { using type = uint16_t; };
template <> struct WeightElement<WeightKind::F32> { using type = float; };

template <WeightKind K>
inline Simd::V load_weights(const typename WeightElement<K>::type* p) {
    if constexpr (K == WeightKind::F32) return Simd::load(p);
    else if constexpr (K == WeightKind::F16) return Simd::load_f16(p);
    else return Simd::load_bf16(p);
}

template <WeightKind K>
inline float weight_scalar(const typename WeightElement<K>::type* p) {
    if constexpr (K == WeightKind::F32) {
        return *p;
    } else if constexpr (K == WeightKind::F16) {
        return Simd::f16_scalar(*p);
    } else {
        const uint32_t bits = uint32_t(*p) << 16;
        float f;
        __builtin_memcpy(&f, &bits, 4);
        return f;
    }
}

// y (RM, RN) = x (RM, k) . w (RN, k)^T
// next: where the tile asks, into L2, for the same columns of the rows after its own (null: nowhere).
template <WeightKind K, int RM, int RN>
void gemm_tile(const float* x, int64_t ldx, const typename WeightElement<K>::type* w, int64_t ldw,
               int k, float* y, int64_t ldy, const typename WeightElement<K>::type* next) {
    static_assert(RM <= 4, "the epilogue sums four rows at a time");
    using Element = typename WeightElement<K>::type;
    constexpr int kStepsPerLine = 64 / (Simd::W * int(sizeof(Element)));  // steps that read one line of a row
    static_assert(kStepsPerLine >= 1);
    Simd::V acc[RM][RN];
#pragma GCC unroll 8
    for (int i = 0; i < RM; ++i)
#pragma GCC unroll 8
        for (int j = 0; j < RN; ++j) acc[i][j] = Simd::zero();

    const int k_vec = k - k % Simd::W;
    for (int p = 0; p < k_vec; p += Simd::W) {
        if (next && p / Simd::W % kStepsPerLine == 0)
#pragma GCC unroll 8
            for (int j = 0; j < RN; ++j) prefetch_to_l2(next + j * ldw + p);
        Simd::V wv[RN];
#pragma GCC unroll 8
        for (int j = 0; j < RN; ++j) wv[j] = load_weights<K>(w + j * ldw + p);
#pragma GCC unroll 8
        for (int i = 0; i < RM; ++i) {
            const Simd::V xv = Simd::load(x + i * ldx + p);
#pragma GCC unroll 8
            for (int j = 0; j < RN; ++j) acc[i][j] = Simd::fma(xv, wv[j], acc[i][j]);
        }
    }
    // Horizontal sums four accumulators at a time (one shuffle network instead of four), then
    // the k % W elements the vectors did not cover. Unrolled so that the accumulators stay in
    // registers (a loop over j indexes them at run time, which spills them all to the stack).
#pragma GCC unroll 8
    for (int j = 0; j < RN; ++j) {
        Simd::V column[4] = {Simd::zero(), Simd::zero(), Simd::zero(), Simd::zero()};
#pragma GCC unroll 4
        for (int i = 0; i < RM; ++i) column[i] = acc[i][j];
        float sums[4];
        Simd::hsum4(column[0], column[1], column[2], column[3], sums);
        for (int i = 0; i < RM; ++i) {
            float sum = sums[i];
            for (int p = k_vec; p < k; ++p) sum += x[i * ldx + p] * weight_scalar<K>(w + j * ldw + p);
            y[i * ldy + j] = sum;
        }
    }
}

// Edge tiles: picks the instantiation for rm <= RM activation rows and rn <= RN weight rows.
template <WeightKind K, int RM, int RN>
void gemm_edge_rows(int rn, const float* x, int64_t ldx, const typename WeightElement<K>::type* w,
                    int64_t ldw, int k, float* y, int64_t ldy, const typename WeightElement<K>::type* next) {
    if constexpr (RN > 1) {
        if (rn < RN) return gemm_edge_rows<K, RM, RN - 1>(rn, x, ldx, w, ldw, k, y, ldy, next);
    }
    gemm_tile<K, RM, RN>(x, ldx, w, ldw, k, y, ldy, next);
}

template <WeightKind K, int RM>
void gemm_edge(int rm, int rn, const float* x, int64_t ldx, const typename WeightElement<K>::type* w,
               int64_t ldw, int k, float* y, int64_t ldy, const typename WeightElement<K>::type* next) {
    if constexpr (RM > 1) {
        if (rm < RM) return gemm_edge<K, RM - 1>(rm, rn, x, ldx, w, ldw, k, y, ldy, next);
    }
    gemm_edge_rows<K, RM, Simd::TN>(rn, x, ldx, w, ldw, k, y, ldy, next);
}

// Decode: y (rows) = w (rows, k) . x (k). Memory-bound: one weight row at a time with four
// independent accumulators streams faster here than interleaving rows (one sequential stream for
// the prefetcher). Long rows also ask, into L2, for the bytes kGemvPrefetchBytes ahead, as the
// quantized decode tiles do: the hardware's prefetcher alone kept too few misses in flight.
constexpr int64_t kGemvPrefetchBytes = 16384;
// Rows shorter than this are attention's (a head of keys in a block of the pool, whose bytes ahead
// belong to other blocks): no prefetch there.
constexpr int kGemvPrefetchMinCols = 1024;

template <WeightKind K>
void gemv(const float* x, const typename WeightElement<K>::type* w, int64_t ldw, int rows, int k, float* y) {
    constexpr int W = Simd::W;
    constexpr int kStepBytes = 4 * W * int(sizeof(typename WeightElement<K>::type));
    const bool ahead = Simd::kDecodePrefetch && k >= kGemvPrefetchMinCols;
    int r = 0;
    // Short rows (attention: a query against a block of keys, k = head_dim): four rows at once, one
    // accumulator each, reduced together, so the reduction does not cost more than the products.
    if (k <= 4 * W && k % W == 0)
        for (; r + 4 <= rows; r += 4) {
            Simd::V acc[4] = {Simd::zero(), Simd::zero(), Simd::zero(), Simd::zero()};
            for (int p = 0; p < k; p += W) {
                const Simd::V xp = Simd::load(x + p);
#pragma GCC unroll 4
                for (int i = 0; i < 4; ++i) acc[i] = Simd::fma(xp, load_weights<K>(w + (r + i) * ldw + p), acc[i]);
            }
            Simd::hsum4(acc[0], acc[1], acc[2], acc[3], y + r);
        }
    for (; r < rows; ++r) {
        const auto* row = w + r * ldw;
        Simd::V a0 = Simd::zero(), a1 = Simd::zero(), a2 = Simd::zero(), a3 = Simd::zero();
        int p = 0;
        for (; p + 4 * W <= k; p += 4 * W) {
            if (ahead)
                for (int b = 0; b < kStepBytes; b += 64)
                    prefetch_to_l2(reinterpret_cast<const char*>(row + p) + kGemvPrefetchBytes + b);
            a0 = Simd::fma(Simd::load(x + p), load_weights<K>(row + p), a0);
            a1 = Simd::fma(Simd::load(x + p + W), load_weights<K>(row + p + W), a1);
            a2 = Simd::fma(Simd::load(x + p + 2 * W), load_weights<K>(row + p + 2 * W), a2);
            a3 = Simd::fma(Simd::load(x + p + 3 * W), load_weights<K>(row + p + 3 * W), a3);
        }
        for (; p + W <= k; p += W) a0 = Simd::fma(Simd::load(x + p), load_weights<K>(row + p), a0);
        float sum = Simd::hsum(Simd::add(Simd::add(a0, a1), Simd::add(a2, a3)));
        for (; p < k; ++p) sum += x[p] * weight_scalar<K>(row + p);
        y[r] = sum;
    }
}

#include "backends/cpu/float_panels.h"

// kFloatPanelMinTokens activation rows or more take panels, where the weights have a panel's rows
// or more; short products (attention's blocks of keys) and fewer rows the tiles: activation rows
// outside, weight rows inside, a TM-row slice of x staying in L1 while the weight rows pass over it.
template <WeightKind K>
void gemm(const float* x, int64_t ldx, int n, const void* weights, int64_t ldw, int rows, int k,
          float* y, int64_t ldy) {
    const auto* w = static_cast<const typename WeightElement<K>::type*>(weights);
    if (n == 1) return gemv<K>(x, w, ldw, rows, k, y);
    if (n >= kFloatPanelMinTokens && rows >= kFloatPanelRows) return float_panel_gemm<K>(x, ldx, n, w, ldw, rows, k, y, ldy);
    // Where more passes follow (more than TM rows), the first one asks, into L2, for the next tile's
    // rows as it reads its own from memory. A single pass is left to the hardware prefetcher:
    // llamadesk-kernel-bench --types bf16,f16 --rows 14336 --cols 4096 --copies 4 read 2 and 4
    // rows at 20-24 GB/s with the requests against 23-24 without (avx512vnni; avx2 22 -> 25).
    const bool ahead = Simd::kDecodePrefetch && k >= kGemvPrefetchMinCols && n > Simd::TM;
    for (int t = 0; t < n; t += Simd::TM) {
        const int rm = n - t < Simd::TM ? n - t : Simd::TM;
        for (int r = 0; r < rows; r += Simd::TN) {
            const int rn = rows - r < Simd::TN ? rows - r : Simd::TN;
            gemm_edge<K, Simd::TM>(rm, rn, x + t * ldx, ldx, w + r * ldw, ldw, k, y + t * ldy + r, ldy,
                                   ahead && t == 0 ? w + (r + Simd::TN) * ldw : nullptr);
        }
    }
}

// out (NR rows, n) += p (NR rows, m) . v (m, n) for one group of NR rows: every value vector loaded
// feeds NR FMAs. v holds elements of kind K (the KV cache's type).
template <WeightKind K, int NR>
void weighted_rows_group(const float* p, int64_t ldp, const typename WeightElement<K>::type* v, int64_t ldv, int m,
                         int n, float* out, int64_t ldo) {
    constexpr int W = Simd::W;
    int d = 0;
    if constexpr (NR == 1) {
        // One row (decode without grouped heads): the FMAs of even and odd positions go to two sets
        // of accumulators, so consecutive positions do not wait on each other.
        for (; d + 4 * W <= n; d += 4 * W) {
            Simd::V even[4], odd[4];
#pragma GCC unroll 4
            for (int c = 0; c < 4; ++c) {
                even[c] = Simd::load(out + d + c * W);
                odd[c] = Simd::zero();
            }
            int j = 0;
            for (; j + 2 <= m; j += 2) {
                const Simd::V p0 = Simd::set1(p[j]), p1 = Simd::set1(p[j + 1]);
#pragma GCC unroll 4
                for (int c = 0; c < 4; ++c) {
                    even[c] = Simd::fma(p0, load_weights<K>(v + j * ldv + d + c * W), even[c]);
                    odd[c] = Simd::fma(p1, load_weights<K>(v + (j + 1) * ldv + d + c * W), odd[c]);
                }
            }
            if (j < m)
#pragma GCC unroll 4
                for (int c = 0; c < 4; ++c)
                    even[c] = Simd::fma(Simd::set1(p[j]), load_weights<K>(v + j * ldv + d + c * W), even[c]);
#pragma GCC unroll 4
            for (int c = 0; c < 4; ++c) Simd::store(out + d + c * W, Simd::add(even[c], odd[c]));
        }
    }
    for (; d + 4 * W <= n; d += 4 * W) {
        Simd::V acc[NR][4];
#pragma GCC unroll 4
        for (int r = 0; r < NR; ++r)
#pragma GCC unroll 4
            for (int c = 0; c < 4; ++c) acc[r][c] = Simd::load(out + r * ldo + d + c * W);
        for (int j = 0; j < m; ++j) {
            Simd::V vj[4];
#pragma GCC unroll 4
            for (int c = 0; c < 4; ++c) vj[c] = load_weights<K>(v + j * ldv + d + c * W);
#pragma GCC unroll 4
            for (int r = 0; r < NR; ++r) {
                const Simd::V prj = Simd::set1(p[r * ldp + j]);
#pragma GCC unroll 4
                for (int c = 0; c < 4; ++c) acc[r][c] = Simd::fma(prj, vj[c], acc[r][c]);
            }
        }
#pragma GCC unroll 4
        for (int r = 0; r < NR; ++r)
#pragma GCC unroll 4
            for (int c = 0; c < 4; ++c) Simd::store(out + r * ldo + d + c * W, acc[r][c]);
    }
    for (; d + W <= n; d += W)
        for (int r = 0; r < NR; ++r) {
            Simd::V a = Simd::load(out + r * ldo + d);
            for (int j = 0; j < m; ++j)
                a = Simd::fma(Simd::set1(p[r * ldp + j]), load_weights<K>(v + j * ldv + d), a);
            Simd::store(out + r * ldo + d, a);
        }
    for (; d < n; ++d)
        for (int r = 0; r < NR; ++r) {
            float a = out[r * ldo + d];
            for (int j = 0; j < m; ++j) a += p[r * ldp + j] * weight_scalar<K>(v + j * ldv + d);
            out[r * ldo + d] = a;
        }
}

template <WeightKind K>
void weighted_rows(const float* p, int64_t ldp, int rows, const void* values, int64_t ldv, int m, int n,
                   float* out, int64_t ldo) {
    const auto* v = static_cast<const typename WeightElement<K>::type*>(values);
    constexpr int kGroup = Simd::W == 8 ? 2 : 4;  // rows x 4 vectors of accumulators fit the registers
    int r = 0;
    for (; r + kGroup <= rows; r += kGroup)
        weighted_rows_group<K, kGroup>(p + r * ldp, ldp, v, ldv, m, n, out + r * ldo, ldo);
    for (; r < rows; ++r) weighted_rows_group<K, 1>(p + r * ldp, ldp, v, ldv, m, n, out + r * ldo, ldo);
}

// weighted_rows for values stored as Q8_0 rows (the q8 KV cache): each block of 32 is widened in
// registers and scaled by p * its scale; n and ldv are multiples of 32.
void weighted_rows_q8_0(const float* p, int64_t ldp, int rows, const void* values, int64_t ldv, int m, int n,
                        float* out, int64_t ldo) {
    constexpr int W = Simd::W, kVectors = 32 / W;
    const auto* v = static_cast<const quant::BlockQ8_0*>(values);
    const int64_t blocks_per_row = ldv / 32;
    for (int r = 0; r < rows; ++r)
        for (int b = 0; b < n / 32; ++b) {
            float* o = out + r * ldo + b * 32;
            Simd::V acc[kVectors];
            for (int c = 0; c < kVectors; ++c) acc[c] = Simd::load(o + c * W);
            for (int j = 0; j < m; ++j) {
                const quant::BlockQ8_0& block = v[j * blocks_per_row + b];
                const Simd::V scale = Simd::set1(p[r * ldp + j] * Simd::f16_scalar(block.d));
                for (int c = 0; c < kVectors; ++c) acc[c] = Simd::fma(scale, Simd::load_i8(block.qs + c * W), acc[c]);
            }
            for (int c = 0; c < kVectors; ++c) Simd::store(o + c * W, acc[c]);
        }
}

// y[0..n) = x[0..n) rounded to f16; a tail shorter than a vector goes through a padded copy.
void to_f16(const float* x, uint16_t* y, int64_t n) {
    constexpr int W = Simd::W;
    int64_t i = 0;
    for (; i + W <= n; i += W) Simd::store_f16(y + i, Simd::load(x + i));
    if (i < n) {
        float in[W] = {};
        uint16_t out[W];
        __builtin_memcpy(in, x + i, size_t(n - i) * sizeof(float));
        Simd::store_f16(out, Simd::load(in));
        __builtin_memcpy(y + i, out, size_t(n - i) * sizeof(uint16_t));
    }
}

// exp(x) for x in float range (Cephes' method): x = n ln2 + r with |r| <= ln2/2, exp(r) by a
// degree-6 polynomial, times 2^n. Below -87.3 the result is 0 (2^n would leave the normal range).
inline Simd::V exp_vec(Simd::V x) {
    const Simd::V lo = Simd::set1(-87.3f);
    x = Simd::min(Simd::max(x, lo), Simd::set1(88.3f));
    const Simd::V n = Simd::round(Simd::mul(x, Simd::set1(1.44269504088896341f)));
    Simd::V r = Simd::fma(n, Simd::set1(-0.693359375f), x);
    r = Simd::fma(n, Simd::set1(2.12194440e-4f), r);
    Simd::V p = Simd::set1(1.9875691500e-4f);
    p = Simd::fma(p, r, Simd::set1(1.3981999507e-3f));
    p = Simd::fma(p, r, Simd::set1(8.3334519073e-3f));
    p = Simd::fma(p, r, Simd::set1(4.1665795894e-2f));
    p = Simd::fma(p, r, Simd::set1(1.6666665459e-1f));
    p = Simd::fma(p, r, Simd::set1(5.0000001201e-1f));
    p = Simd::fma(p, Simd::mul(r, r), Simd::add(r, Simd::set1(1.0f)));
    return Simd::select_gt(x, lo, Simd::mul(p, Simd::pow2n(n)), Simd::zero());
}

// Applies f to x[0..n) in vectors; the tail goes through a padded vector (pad must be harmless for f).
template <class F>
void map_in_place(float* x, int64_t n, float pad, F f) {
    constexpr int W = Simd::W;
    int64_t i = 0;
    for (; i + W <= n; i += W) Simd::store(x + i, f(Simd::load(x + i), i));
    if (i < n) {
        float tail[W];
        for (int j = 0; j < W; ++j) tail[j] = i + j < n ? x[i + j] : pad;
        Simd::store(tail, f(Simd::load(tail), i));
        for (int j = 0; i + j < n; ++j) x[i + j] = tail[j];
    }
}

SoftmaxScale softmax(float* x, int n) {
    constexpr int W = Simd::W;
    float max_value = x[0];
    int i = 0;
    if (n >= W) {
        Simd::V m = Simd::load(x);
        for (i = W; i + W <= n; i += W) m = Simd::max(m, Simd::load(x + i));
        max_value = Simd::hmax(m);
    }
    for (; i < n; ++i) max_value = x[i] > max_value ? x[i] : max_value;

    const Simd::V max_v = Simd::set1(max_value);
    Simd::V sum = Simd::zero();
    map_in_place(x, n, -1e30f, [&](Simd::V v, int64_t) {
        const Simd::V e = exp_vec(Simd::add(v, Simd::mul(max_v, Simd::set1(-1.0f))));
        sum = Simd::add(sum, e);  // padding contributes exp(-huge) = 0
        return e;
    });
    const float total = Simd::hsum(sum);
    const Simd::V scale = Simd::set1(1.0f / total);
    map_in_place(x, n, 0.0f, [&](Simd::V v, int64_t) { return Simd::mul(v, scale); });
    return {max_value, total};
}

void swiglu(float* gate, const float* up, int64_t n) {
    // silu(g) * u = g * u / (1 + exp(-g)); the tail's padded lanes are computed but not stored
    map_in_place(gate, n, 0.0f, [&](Simd::V g, int64_t i) {
        Simd::V u;
        if (i + Simd::W <= n) {
            u = Simd::load(up + i);
        } else {
            float tail[Simd::W];
            for (int j = 0; j < Simd::W; ++j) tail[j] = i + j < n ? up[i + j] : 0.0f;
            u = Simd::load(tail);
        }
        const Simd::V one = Simd::set1(1.0f);
        const Simd::V denom = Simd::add(one, exp_vec(Simd::mul(g, Simd::set1(-1.0f))));
        return Simd::div(Simd::mul(g, u), denom);
    });
}

float sum_squares(const float* x, int n) {
    constexpr int W = Simd::W;
    Simd::V a0 = Simd::zero(), a1 = Simd::zero();
    int i = 0;
    for (; i + 2 * W <= n; i += 2 * W) {
        const Simd::V v0 = Simd::load(x + i), v1 = Simd::load(x + i + W);
        a0 = Simd::fma(v0, v0, a0);
        a1 = Simd::fma(v1, v1, a1);
    }
    float sum = Simd::hsum(Simd::add(a0, a1));
    for (; i < n; ++i) sum += x[i] * x[i];
    return sum;
}

// Float FMAs on 8 independent accumulators (peak_probe's float half).
uint64_t float_peak_probe(int64_t iterations) {
    Simd::V acc[8];
    for (int i = 0; i < 8; ++i) acc[i] = Simd::set1(float(i));
    const Simd::V a = Simd::set1(0.999f), b = Simd::set1(1e-3f);
    for (int64_t it = 0; it < iterations; ++it)
#pragma GCC unroll 8
        for (int i = 0; i < 8; ++i) acc[i] = Simd::fma(acc[i], a, b);
    float out[Simd::W];
    Simd::store(out, Simd::add(Simd::add(acc[0], acc[7]), Simd::add(acc[3], acc[4])));
    volatile float sink = out[0];  // keeps the loop
    (void)sink;
    return uint64_t(iterations) * 8 * Simd::W;
}

// The set with its plain-float entries; each file adds the block types' entries and quantize_rows.
Kernels make_kernels(const char* isa) {
    Kernels k{};
    k.isa = isa;
    k.tile_rows = kFloatPanelRows;
    k.block_tile_rows = Simd::TN;  // with_quantized sets the block types' own
    k.types[int(DType::F32)] = TypeKernels{&gemm<WeightKind::F32>, nullptr, &weighted_rows<WeightKind::F32>, nullptr, 0, kFloatItemRows, nullptr};
    k.types[int(DType::F16)] = TypeKernels{&gemm<WeightKind::F16>, nullptr, &weighted_rows<WeightKind::F16>, nullptr, 0, kFloatItemRows, nullptr};
    k.types[int(DType::BF16)] = TypeKernels{&gemm<WeightKind::BF16>, nullptr, &weighted_rows<WeightKind::BF16>, nullptr, 0, kFloatItemRows, nullptr};
    k.types[int(DType::Q8_0)].weighted_rows = &weighted_rows_q8_0;
    k.to_f16 = &to_f16;
    k.softmax = &softmax;
    k.swiglu = &swiglu;
    k.sum_squares = &sum_squares;
    return k;
}
