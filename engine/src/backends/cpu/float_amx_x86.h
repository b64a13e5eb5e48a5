// Prefill of BF16 and F16 weights with AMX-BF16 tile products: the amx set where the CPU has
// AMX-BF16, for kBf16TileMinTokens or more activation rows. quant_kernels_x86.h includes it after
// quant_amx_x86.h, whose tile configuration it shares.
//
// One tile product (TDPBF16PS) multiplies 16 weight rows of 32 bf16 (tile A: rows as they lie) by
// 16 activation rows' 32 bf16 in pairs (tile B, Bf16Tiles' layout) and adds the 16 x 16 sums to
// f32 tile C: 8192 multiply-adds. The activations are rounded to bf16 once per product input
// (pack_bf16_tiles), as llama.cpp's BF16 product rounds them; the weights stay exact: BF16 as
// stored, and F16 (11 significant bits) as the sum of two bf16 planes, its top 8 bits and the
// rest (at most 3 bits, so exact too), at the cost of a second product.
//
// Work goes by panels of 32 weight rows (two A tiles) and chunks of columns: each chunk of the
// panel is copied into tile layout once (16 KiB, in L1) and every pair of activation tiles passes
// over it, with the four C tiles' sums kept in tiles over a chunk and in memory between chunks.
// At the end the sums (weight rows by tokens) go to y (tokens by weight rows) transposed.

// Dword i of the result: the high halves of dwords 2i and 2i + 1 of a, b (a's 16 then b's).
inline __m512i high_halves(__m512i a, __m512i b) {
    alignas(64) static constexpr int16_t kOdd[32] = {1,  3,  5,  7,  9,  11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31,
                                                     33, 35, 37, 39, 41, 43, 45, 47, 49, 51, 53, 55, 57, 59, 61, 63};
    return _mm512_permutex2var_epi16(a, _mm512_load_si512(kOdd), b);
}

// f32 bits rounded to nearest even at bit 16, so that the high half is the bf16.
inline __m512i round_to_bf16(__m512 v) {
    const __m512i bits = _mm512_castps_si512(v);
    const __m512i odd = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
    return _mm512_add_epi32(bits, _mm512_add_epi32(odd, _mm512_set1_epi32(0x7fff)));
}

// Kernels::pack_bf16_tiles: each row's 32 columns of a step become 16 pairs, scattered into
// column t of the step's tile.
void pack_bf16_tiles(const float* x, int64_t ldx, int n, int64_t k, uint32_t* pairs) {
    const int64_t steps = k / kBf16Step;
    const __m512i column = _mm512_mullo_epi32(_mm512_set1_epi32(kBf16TileRows),
                                              _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
    for (int tile = 0; tile * kBf16TileRows < n; ++tile)
        for (int t = 0; t < kBf16TileRows; ++t) {
            const int row = tile * kBf16TileRows + t;
            uint32_t* out = pairs + tile * steps * 256 + t;
            for (int64_t s = 0; s < steps; ++s, out += 256) {
                __m512i v = _mm512_setzero_si512();
                if (row < n) {
                    const float* from = x + row * ldx + s * kBf16Step;
                    v = high_halves(round_to_bf16(_mm512_loadu_ps(from)), round_to_bf16(_mm512_loadu_ps(from + 16)));
                }
                _mm512_i32scatter_epi32(out, column, v, 4);
            }
        }
}

constexpr int kBf16PanelRows = 2 * kTileRows;  // two A tiles
// A prefill item's weight rows: many (each item reads all activation tiles from L2 or L3), whole
// panels, and a multiple of the float tile that rows_per_item rounds to.
constexpr int kBf16ItemRows = 9 * kBf16PanelRows;
static_assert(kBf16ItemRows % kFloatPanelRows == 0);
// A tiles per A tile row of a panel chunk (BF16: 8 steps of 32 columns; F16: 4 steps in two
// planes): 16 KiB for the panel, in L1. 4 and 16 were slower (kernel bench, 4096 x 4096, 512 tokens).
constexpr int kBf16ChunkTiles = 8;

struct alignas(64) Bf16Tile {
    uint16_t v[kTileRows][kBf16Step];
};

// The 32 values of row `row` at column c (of `rows`; zeros past it) as bf16: one plane, or F16's two.
template <WeightKind K>
void copy_weight_step(const uint16_t* w, int64_t ldw, int row, int rows, int64_t c, uint16_t* high, uint16_t* low) {
    if (row >= rows) {
        _mm512_store_si512(high, _mm512_setzero_si512());
        if constexpr (K == WeightKind::F16) _mm512_store_si512(low, _mm512_setzero_si512());
        return;
    }
    const uint16_t* from = w + row * ldw + c;
    if constexpr (K == WeightKind::BF16) {
        _mm512_store_si512(high, _mm512_loadu_si512(from));
    } else {
        const __m512 a = Simd::load_f16(from), b = Simd::load_f16(from + 16);
        const __m512i top = _mm512_set1_epi32(int32_t(0xffff0000));
        const __m512i a_high = _mm512_and_si512(_mm512_castps_si512(a), top);
        const __m512i b_high = _mm512_and_si512(_mm512_castps_si512(b), top);
        _mm512_store_si512(high, high_halves(a_high, b_high));
        const __m512 a_low = _mm512_sub_ps(a, _mm512_castsi512_ps(a_high));
        const __m512 b_low = _mm512_sub_ps(b, _mm512_castsi512_ps(b_high));
        _mm512_store_si512(low, high_halves(_mm512_castps_si512(a_low), _mm512_castps_si512(b_low)));
    }
}

// One A tile of each plane against B tiles 2 and, when Two, 3: A tile 0 into C tiles 4, 5, A tile 1
// into 6, 7 (the tile intrinsics take register numbers as literals).
template <int Planes, bool Two>
inline void bf16_products_a0(const Bf16Tile* planes) {
#pragma GCC unroll 2
    for (int p = 0; p < Planes; ++p) {
        _tile_loadd(0, planes[p].v, 64);
        _tile_dpbf16ps(4, 0, 2);
        if constexpr (Two) _tile_dpbf16ps(5, 0, 3);
    }
}
template <int Planes, bool Two>
inline void bf16_products_a1(const Bf16Tile* planes) {
#pragma GCC unroll 2
    for (int p = 0; p < Planes; ++p) {
        _tile_loadd(1, planes[p].v, 64);
        _tile_dpbf16ps(6, 1, 2);
        if constexpr (Two) _tile_dpbf16ps(7, 1, 3);
    }
}

// Steps [s0, s0 + n_steps) of activation tiles T and, when Two, T + 1, against a panel chunk of one
// or two A tiles (TwoA); C tiles 4, 5 (A tile 0) and 6, 7 (A tile 1) start from c (or zero) and end
// there. c: (T, a) at c + (2 * T + a) * 256 floats.
template <int Planes, bool TwoA, bool Two>
void bf16_panel_pass(const Bf16Tiles& x, int64_t steps, int tile, int64_t s0, int n_steps,
                     const Bf16Tile (*panel)[kBf16ChunkTiles][Planes], float* c) {
    float* const c0 = c + 2 * tile * 256;  // (T, 0), (T, 1), (T + 1, 0), (T + 1, 1)
    if (s0 == 0) {
        _tile_zero(4);
        _tile_zero(5);
        _tile_zero(6);
        _tile_zero(7);
    } else {
        _tile_loadd(4, c0, 64);
        _tile_loadd(6, c0 + 256, 64);
        if constexpr (Two) {
            _tile_loadd(5, c0 + 512, 64);
            _tile_loadd(7, c0 + 768, 64);
        }
    }
    const uint32_t* b = x.pairs + (tile * steps + s0) * 256;
    for (int s = 0; s < n_steps; ++s, b += 256) {
        _tile_loadd(2, b, 64);
        if constexpr (Two) _tile_loadd(3, b + steps * 256, 64);
        bf16_products_a0<Planes, Two>(panel[0][s]);
        if constexpr (TwoA) bf16_products_a1<Planes, Two>(panel[1][s]);
    }
    _tile_stored(4, c0, 64);
    if constexpr (TwoA) _tile_stored(6, c0 + 256, 64);
    if constexpr (Two) {
        _tile_stored(5, c0 + 512, 64);
        if constexpr (TwoA) _tile_stored(7, c0 + 768, 64);
    }
}

// TypeKernels::bf16_tile_gemm for BF16 and F16 weights.
template <WeightKind K>
void bf16_tile_gemm(const Bf16Tiles& x, int n, const void* weights, int64_t ldw, int rows, float* y, int64_t ldy) {
    constexpr int kPlanes = K == WeightKind::F16 ? 2 : 1;
    constexpr int kChunkSteps = kBf16ChunkTiles / kPlanes;  // 32-column steps per chunk
    using Panel = Bf16Tile[kBf16ChunkTiles][kPlanes];
    const auto* w = static_cast<const uint16_t*>(weights);
    const int64_t steps = x.k / kBf16Step;
    const int n_tiles = (n + kTileRows - 1) / kTileRows;
    thread_local std::vector<Panel> panel(2);  // per A tile, its chunk's steps (the first kChunkSteps used)
    thread_local std::vector<float> sums;      // (tile, A tile) at (2 * tile + a) * 256: 16 rows by 16 tokens
    sums.resize(size_t(n_tiles + 1) * 2 * 256);
    // (a thread_local's every use calls its wrapper: the loops below use plain pointers)
    Panel* const chunk = panel.data();
    float* const c = sums.data();
    const __m512i column = _mm512_mullo_epi32(_mm512_set1_epi32(kTileRows),
                                              _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
    configure_tiles();
    for (int r0 = 0; r0 < rows; r0 += kBf16PanelRows) {
        const bool two_a = rows - r0 > kTileRows;
        for (int64_t s0 = 0; s0 < steps; s0 += kChunkSteps) {
            const int n_steps = int(std::min<int64_t>(kChunkSteps, steps - s0));
            for (int a = 0; a < (two_a ? 2 : 1); ++a)
                for (int r = 0; r < kTileRows; ++r)
                    for (int s = 0; s < n_steps; ++s)
                        copy_weight_step<K>(w, ldw, r0 + a * kTileRows + r, rows, (s0 + s) * kBf16Step,
                                            chunk[a][s][0].v[r], chunk[a][s][kPlanes - 1].v[r]);
            for (int tile = 0; tile < n_tiles; tile += 2) {
                const bool two = tile + 1 < n_tiles;
                if (two_a && two) bf16_panel_pass<kPlanes, true, true>(x, steps, tile, s0, n_steps, chunk, c);
                else if (two_a) bf16_panel_pass<kPlanes, true, false>(x, steps, tile, s0, n_steps, chunk, c);
                else if (two) bf16_panel_pass<kPlanes, false, true>(x, steps, tile, s0, n_steps, chunk, c);
                else bf16_panel_pass<kPlanes, false, false>(x, steps, tile, s0, n_steps, chunk, c);
            }
        }
        // token t's outputs are column t % 16 of its tile's sums: a gather per token and A tile
        for (int a = 0; a < (two_a ? 2 : 1); ++a) {
            const int first = r0 + a * kTileRows, count = std::min(kTileRows, rows - first);
            const __mmask16 valid = __mmask16((1u << count) - 1);
            for (int t = 0; t < n; ++t) {
                const float* sum = c + (2 * (t / kTileRows) + a) * 256 + t % kTileRows;
                _mm512_mask_storeu_ps(y + t * ldy + first, valid, _mm512_i32gather_ps(column, sum, 4));
            }
        }
    }
    _tile_release();
}

// peak_probe's bf16 tile products in the amx set.
uint64_t amx_bf16_peak_probe(int64_t iterations) {
    return tile_peak_probe(iterations, 16 * 16 * 32, [] {
        _tile_dpbf16ps(4, 0, 2);
        _tile_dpbf16ps(5, 0, 3);
        _tile_dpbf16ps(6, 1, 2);
        _tile_dpbf16ps(7, 1, 3);
    });
}
