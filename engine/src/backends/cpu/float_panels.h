// Prefill products of float weights (F32, F16, BF16) on panels: kernels_impl.h includes it before
// gemm, in every kernel set (AMX's BF16 tiles take F16 and BF16 from kBf16TileMinTokens rows on).
//
// gemm_tile sums each (activation row, weight row) pair along k in a vector's lanes: every weight
// vector is converted from f16 or bf16 again for each TM activation rows, each tile ends in
// horizontal sums, and each step loads TM activation vectors. Here, as in a BLAS, a thread copies
// PN vectors' width of weight rows, kFloatPanelSteps columns at a time, into a panel in L1 where
// lane r of every vector is row r, converted to float once per product; each activation row then
// costs, per column, one broadcast and PN FMAs. The mapped file stays the only copy of the weights.
// llamadesk-kernel-bench --rows 14336 --cols 4096 --tokens 512, 2 Xeon cores, GMAC/s, tiles ->
// panels: AVX2 F32 56 -> 87, BF16 71 -> 90 (OpenBLAS's Haswell SGEMM: 100); AVX-512 F32 74 -> 129,
// BF16 94 -> 137 (OpenBLAS: 143).
// AVX-512 BF16's VDPBF16PS (32 multiply-adds per instruction, activations rounded to bf16) is not
// used where AMX is absent: on a Xeon with avx512_bf16 and no AMX, a loop of independent
// VDPBF16PS ran 1.3 G instructions/s per core, 43 GMAC/s, against FMA's 5.5 G, 87 GMAC/s (other
// cores, Zen 4 among them, were not measured).

constexpr int kFloatPanelRows = Simd::PN * Simd::W;
// Below kFloatPanelMinTokens (kernels.h) activation rows the tiles win, which convert each weight
// once per TM rows but do not copy it: BF16 at 16 rows, 62.8 GMAC/s on tiles against 51.5 on
// panels (AVX2; at 32, 65.0 against 78.5).
// Columns per panel: a sum runs over at most 128 products before it joins the block sums (with 256,
// AVX2's F32 sums over 1000 columns missed the tests' 1e-5), and AVX-512's 48 rows take 24 KiB of
// L1, with room for the activation rows.
constexpr int kFloatPanelSteps = 128;
// A prefill item's weight rows: 8 panels pass over each block of the activations, which then comes
// from L2; with 1 it came from L3 for each panel (AVX2 F32 73 -> 79 GMAC/s, before the prefetch).
constexpr int kFloatItemRows = 8 * kFloatPanelRows;

// panel[p * kFloatPanelRows + r] = element p of row r of w (ldw elements apart) as a float, for
// rows [0, rn) and columns [0, kn); zeros for the rows from rn on. W rows at a time, W columns
// turned into W vectors of rows by one transpose.
template <WeightKind K>
void pack_float_panel(const typename WeightElement<K>::type* w, int64_t ldw, int rn, int kn, float* panel) {
    constexpr int W = Simd::W, NR = kFloatPanelRows;
    for (int r0 = 0; r0 < NR; r0 += W) {
        const int rows = rn - r0 < W ? (rn - r0 > 0 ? rn - r0 : 0) : W;
        int p = 0;
        for (; p + W <= kn; p += W) {
            Simd::V v[W];
#pragma GCC unroll 16
            for (int i = 0; i < W; ++i) v[i] = i < rows ? load_weights<K>(w + (r0 + i) * ldw + p) : Simd::zero();
            Simd::transpose(v);
#pragma GCC unroll 16
            for (int c = 0; c < W; ++c) Simd::store(panel + (p + c) * NR + r0, v[c]);
        }
        for (; p < kn; ++p)
            for (int i = 0; i < W; ++i) panel[p * NR + r0 + i] = i < rows ? weight_scalar<K>(w + (r0 + i) * ldw + p) : 0.0f;
    }
}

// Part `part` of `parts` of the kn columns of rows [0, rn) of w asked for into L2.
template <class E>
void prefetch_panel_part(const E* w, int64_t ldw, int rn, int kn, int part, int parts) {
    const int64_t row_bytes = int64_t(kn) * int64_t(sizeof(E));
    const int64_t row_lines = (row_bytes + 63) / 64 + 1;  // the last partial line, wherever the row starts
    const int64_t lines = rn * row_lines, from = lines * part / parts, to = lines * (part + 1) / parts;
    int64_t r = from / row_lines, at = from % row_lines * 64;
    for (int64_t line = from; line < to; ++line) {
        prefetch_to_l2(reinterpret_cast<const char*>(w + r * ldw) + (at < row_bytes ? at : row_bytes - 1));
        at += 64;
        if (at >= row_lines * 64) at = 0, ++r;
    }
}

// y (RM, kFloatPanelRows) = x (RM, kn) . panel^T, added to y's own values where accumulate (the
// panels of earlier columns). Each block of columns sums from zero, so a sum's rounding error
// grows over kFloatPanelSteps products and k / kFloatPanelSteps blocks, not over all k.
template <int RM>
void float_panel_tile(const float* x, int64_t ldx, const float* panel, int kn, float* y, int64_t ldy, bool accumulate) {
    constexpr int TN = Simd::PN, W = Simd::W, NR = kFloatPanelRows;
    Simd::V acc[RM][TN];
#pragma GCC unroll 8
    for (int i = 0; i < RM; ++i)
#pragma GCC unroll 8
        for (int j = 0; j < TN; ++j) acc[i][j] = Simd::zero();
    // two columns per pass: AVX2 BF16 108 -> 117 GMAC/s (kernel bench, 256 tokens), AVX-512 189 -> 192
#pragma GCC unroll 2
    for (int p = 0; p < kn; ++p) {
        Simd::V wv[TN];
#pragma GCC unroll 8
        for (int j = 0; j < TN; ++j) wv[j] = Simd::load(panel + p * NR + j * W);
#pragma GCC unroll 8
        for (int i = 0; i < RM; ++i) {
            const Simd::V xv = Simd::set1(x[i * ldx + p]);
#pragma GCC unroll 8
            for (int j = 0; j < TN; ++j) acc[i][j] = Simd::fma(xv, wv[j], acc[i][j]);
        }
    }
#pragma GCC unroll 8
    for (int i = 0; i < RM; ++i)
#pragma GCC unroll 8
        for (int j = 0; j < TN; ++j)
            Simd::store(y + i * ldy + j * W, accumulate ? Simd::add(Simd::load(y + i * ldy + j * W), acc[i][j]) : acc[i][j]);
}

template <int RM>
void float_panel_edge(int rm, const float* x, int64_t ldx, const float* panel, int kn, float* y, int64_t ldy,
                      bool accumulate) {
    if constexpr (RM > 1) {
        if (rm < RM) return float_panel_edge<RM - 1>(rm, x, ldx, panel, kn, y, ldy, accumulate);
    }
    float_panel_tile<RM>(x, ldx, panel, kn, y, ldy, accumulate);
}

// The product as gemm's, for n >= kFloatPanelMinTokens: a block of columns at a time, so that the
// activations' block stays in L2 while each panel of the thread's rows passes over it. The next
// panel's weights are asked for into L2 meanwhile, spread over the tiles: packing waited on them
// from memory (three quarters of its samples on one load, 11 % of an AVX2 F32 product). The sums
// build up in a buffer of the thread's own and go to y at the end: y's rows lie a whole matrix row
// apart, which maps them onto the same cache sets, and adding each block's sums there cost a
// quarter of the product (AVX-512, 14336 x 4096, 512 tokens).
template <WeightKind K>
void float_panel_gemm(const float* x, int64_t ldx, int n, const typename WeightElement<K>::type* w, int64_t ldw,
                      int rows, int k, float* y, int64_t ldy) {
    constexpr int TM = Simd::PM, NR = kFloatPanelRows;
    const int panels = (rows + NR - 1) / NR, tiles = (n + TM - 1) / TM;
    auto rows_of = [&](int b) { return rows - b * NR < NR ? rows - b * NR : NR; };
    auto columns_from = [&](int kb) { return k - kb < kFloatPanelSteps ? k - kb : kFloatPanelSteps; };
    thread_local std::vector<float> panel(size_t(kFloatPanelSteps) * NR), sums;
    sums.resize(size_t(panels) * size_t(n) * NR);
    for (int kb = 0; kb < k; kb += kFloatPanelSteps) {
        const int kn = columns_from(kb);
        for (int b = 0; b < panels; ++b) {
            pack_float_panel<K>(w + b * NR * ldw + kb, ldw, rows_of(b), kn, panel.data());
            // the next panel: this block's next rows, or the next block's first
            const int next_b = b + 1 < panels ? b + 1 : 0, next_kb = b + 1 < panels ? kb : kb + kFloatPanelSteps;
            float* const panel_sums = sums.data() + size_t(b) * size_t(n) * NR;
            for (int i = 0; i < tiles; ++i) {
                if (next_kb < k) prefetch_panel_part(w + next_b * NR * ldw + next_kb, ldw, rows_of(next_b), columns_from(next_kb), i, tiles);
                const int t = i * TM;
                float_panel_edge<TM>(n - t < TM ? n - t : TM, x + t * ldx + kb, ldx, panel.data(), kn, panel_sums + t * NR,
                                     NR, kb > 0);
            }
        }
    }
    for (int b = 0; b < panels; ++b)
        for (int t = 0; t < n; ++t) {
            const float* from = sums.data() + (size_t(b) * size_t(n) + size_t(t)) * NR;
            for (int c = 0; c < rows_of(b); ++c) y[t * ldy + b * NR + c] = from[c];
        }
}
