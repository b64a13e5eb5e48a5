// Prefill products of block types on weight rows interleaved into panels. quant_kernels_x86.h
// includes it after the type descriptions, in every x86 kernel set.
//
// The tiles of quant_kernels_x86.h give all lanes of a dot to one (activation row, weight row)
// pair, so each pair pays a dot and three float steps (convert, scale, accumulate) per chunk. Here
// a thread first copies a vector's width of weight rows (16 with AVX-512 VNNI, 8 with AVX2) into a
// panel where lane r of every vector belongs to row r, the layout llama.cpp's repacking gives its
// weights at load. The panel is made per product in a buffer of a few dozen KiB, so the mapped file
// stays the only copy of the weights: each 32-element chunk holds the rows' weights unpacked to
// bytes, and their scales and offsets decoded to floats. Every activation row then costs, per chunk,
// eight dots against broadcast activation bytes and float steps shared by all the panel's rows: a
// convert and a multiply-add per scale (Q6_K has two), one more for a float offset, and one by the
// activation's d, which K-quant groups with VNNI pay once per super-block (their activations are
// quantized per 256: k_groups_panel_gemm).
// Packing reads each weight once per product, as the decode tile does; the prefill's activation
// rows then reuse the panel.

// The two steps of a transpose of 8 x 8 dwords that stay within 128-bit lanes (V: a PanelVec):
// u[h + j] holds, per 128 bits, dwords j and j + 4 of rows h .. h + 3 of a.
template <class V>
void transpose_in_lanes(const typename V::I (&a)[8], typename V::I (&u)[8]) {
    typename V::I t[8];
#pragma GCC unroll 4
    for (int r = 0; r < 8; r += 2) {
        t[r] = V::unpack_lo32(a[r], a[r + 1]);
        t[r + 1] = V::unpack_hi32(a[r], a[r + 1]);
    }
#pragma GCC unroll 2
    for (int h = 0; h < 8; h += 4) {
        u[h + 0] = V::unpack_lo64(t[h], t[h + 2]);
        u[h + 1] = V::unpack_hi64(t[h], t[h + 2]);
        u[h + 2] = V::unpack_lo64(t[h + 1], t[h + 3]);
        u[h + 3] = V::unpack_hi64(t[h + 1], t[h + 3]);
    }
}

#if defined(LLAMADESK_CPU_VNNI)
struct PanelVec {
    static constexpr int kRows = 16;
    static constexpr int kTileRows = 6;  // activation rows per pass: 6 dot and 6 float accumulators
    // dpbusd sums 4 products into 32 bits, so any unsigned byte works: Q8_0 is stored plus 128
    static constexpr bool kUnsignedBytes = true;
    using I = __m512i;
    using F = __m512;
    using Mask = __mmask16;

    static I zero_i() { return _mm512_setzero_si512(); }
    static I set1_i(int32_t a) { return _mm512_set1_epi32(a); }
    static I dot(I sum, I weights, int32_t four) { return _mm512_dpbusd_epi32(sum, weights, _mm512_set1_epi32(four)); }
    static constexpr bool kPairSums16 = false;  // dpbusd sums into 32 bits at no cost
    static I add_byte_pairs(I sum16, I weights, int32_t four);  // never used where kPairSums16 is false
    static F to_float(I v) { return _mm512_cvtepi32_ps(v); }
    static F zero() { return _mm512_setzero_ps(); }
    static F set1(float a) { return _mm512_set1_ps(a); }
    static F load(const float* p) { return _mm512_load_ps(p); }
    static F mul(F a, F b) { return _mm512_mul_ps(a, b); }
    static F fma(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }
    static Mask lanes(int n) { return Mask((1u << n) - 1); }
    static void store(float* p, Mask m, F v) { _mm512_mask_storeu_ps(p, m, v); }

    static I unpack_lo32(I a, I b) { return _mm512_unpacklo_epi32(a, b); }
    static I unpack_hi32(I a, I b) { return _mm512_unpackhi_epi32(a, b); }
    static I unpack_lo64(I a, I b) { return _mm512_unpacklo_epi64(a, b); }
    static I unpack_hi64(I a, I b) { return _mm512_unpackhi_epi64(a, b); }

    // out[g] lane r = dword g of rows[r]: two 8 x 8 transposes of dwords, one per 256-bit half.
    static void interleave(const __m256i (&rows)[kRows], I (&out)[8]) {
        I a[8], u[8];
#pragma GCC unroll 8
        for (int r = 0; r < 8; ++r) a[r] = _mm512_inserti64x4(_mm512_castsi256_si512(rows[r]), rows[r + 8], 1);
        transpose_in_lanes<PanelVec>(a, u);  // rows 0 .. 7 in the low 256 bits, 8 .. 15 in the high
        const I first = _mm512_set_epi64(13, 12, 5, 4, 9, 8, 1, 0), second = _mm512_set_epi64(15, 14, 7, 6, 11, 10, 3, 2);
#pragma GCC unroll 4
        for (int g = 0; g < 4; ++g) {
            out[g] = _mm512_permutex2var_epi64(u[g], first, u[g + 4]);
            out[g + 4] = _mm512_permutex2var_epi64(u[g], second, u[g + 4]);
        }
    }
};
#else
struct PanelVec {
    static constexpr int kRows = 8;
    static constexpr int kTileRows = 4;  // 4 dot and 4 float accumulators of 16 registers
    // maddubs sums byte products in pairs into 16 bits, which bytes above 63 can overflow: Q8_0
    // stays signed and multiplies its magnitudes (signed_dot)
    static constexpr bool kUnsignedBytes = false;
    using I = __m256i;
    using F = __m256;
    using Mask = __m256i;

    static I zero_i() { return _mm256_setzero_si256(); }
    static I set1_i(int32_t a) { return _mm256_set1_epi32(a); }
    static I dot(I sum, I weights, int32_t four) { return Int8Dot::dot(sum, weights, _mm256_set1_epi32(four)); }
    // maddubs alone, its pair sums kept in 16 bits (add_byte_pairs), and those widened into 32 (widen16)
    static constexpr bool kPairSums16 = true;
    static I add_byte_pairs(I sum16, I weights, int32_t four) {
        return in_order(_mm256_add_epi16(sum16, _mm256_maddubs_epi16(weights, _mm256_set1_epi32(four))));
    }
    static I widen16(I sum, I sum16) { return in_order(_mm256_add_epi32(sum, _mm256_madd_epi16(sum16, _mm256_set1_epi16(1)))); }
    static I magnitudes(I weights) { return _mm256_abs_epi8(weights); }
    static I signed_dot(I sum, I weights, I magnitudes, int32_t four) {
        return Int8Dot::dot(sum, magnitudes, _mm256_sign_epi8(_mm256_set1_epi32(four), weights));
    }
    static F to_float(I v) { return _mm256_cvtepi32_ps(v); }
    static F zero() { return _mm256_setzero_ps(); }
    static F set1(float a) { return _mm256_set1_ps(a); }
    static F load(const float* p) { return _mm256_load_ps(p); }
    static F mul(F a, F b) { return _mm256_mul_ps(a, b); }
    static F fma(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }
    static Mask lanes(int n) { return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)); }
    static void store(float* p, Mask m, F v) { _mm256_maskstore_ps(p, m, v); }

    static I unpack_lo32(I a, I b) { return _mm256_unpacklo_epi32(a, b); }
    static I unpack_hi32(I a, I b) { return _mm256_unpackhi_epi32(a, b); }
    static I unpack_lo64(I a, I b) { return _mm256_unpacklo_epi64(a, b); }
    static I unpack_hi64(I a, I b) { return _mm256_unpackhi_epi64(a, b); }

    // out[g] lane r = dword g of rows[r]: an 8 x 8 transpose of dwords.
    static void interleave(const __m256i (&rows)[kRows], I (&out)[8]) {
        I u[8];
        transpose_in_lanes<PanelVec>(rows, u);
#pragma GCC unroll 4
        for (int g = 0; g < 4; ++g) {
            out[g] = _mm256_permute2x128_si256(u[g], u[g + 4], 0x20);
            out[g + 4] = _mm256_permute2x128_si256(u[g], u[g + 4], 0x31);
        }
    }
};
#endif

// How many vectors' maddubs pair sums (each at most 2 x max_byte x 127, the activations' bytes
// within +-127) add up in 16 bits, at most n.
constexpr int pair_sums_in_16_bits(int max_byte, int n) {
    return 32767 / (2 * max_byte * 127) < n ? 32767 / (2 * max_byte * 127) : n;
}

// From this many activation rows plain weight rows of blocks of 32 take panels, fewer the tile (groups
// have their own line, kGroupPanelFrom). A fifth row is a second pass of the tile (kQuantTileRows)
// over every weight: llamadesk-kernel-bench --types q8_0,q4_0,q5_0,q5_1 --rows 14336 --cols 4096
// --copies 12, 2 Xeon cores, twice, GMAC/s of the tile against the panels at 5 rows: avx512vnni Q8_0
// 56, 58 : 87, 83, Q4_0 60, 61 : 102, 103, Q5_1 39, 38 : 61, 61; avx2 Q8_0 35, 38 : 54, 49, Q4_0
// 39, 36 : 86, 86. At 4 the tile wins or ties, save on avx2 for Q4_0 and Q5_0 (Q8_0's tile wins
// there: 53, 55 : 49, 48). The line had been 8 rows.
constexpr int kPanelMinTokens = 5;
// Weight rows of a prefill work item on panels (TypeKernels::prefill_item_rows). A panel is packed
// and passed over on its own whatever the item's size, so items are large: with items of 128 KiB
// of weights (32 to 48 rows), each of which then laid out every activation row's scalars again,
// llamadesk-kernel-bench --isa avx512vnni --rows 14336 --cols 4096 --tokens 512 read Q8_0 297,
// Q4_0 groups 316, Q4_K groups 316, Q6_K groups 291 GMAC/s; with 512 rows 347-353, 360-365, 345-354,
// 327-328 (2 Xeon cores, alternating).
constexpr int kPanelItemRows = 512;

// A chunk's float offsets (Q4_1, Q5_1, K-quant mins; lane r: row r's, what the activation's d_sum
// multiplies), in the panels of types that have them.
template <bool kFloatOffset>
struct PanelOffset {
    PanelVec::F offset;
};
template <>
struct PanelOffset<false> {};

template <class T>
struct PanelChunk : PanelOffset<T::kFloatOffset> {
    static constexpr int kHalves = T::kHalfScales ? 2 : 1;  // Q6_K scales each 16 elements
    // Q8_0's signed bytes: stored plus 128 (offset -128) where dots take unsigned bytes of any size
    static constexpr bool kSignedBytes = T::kSigned && !PanelVec::kUnsignedBytes;
    static constexpr int kIntOffset = T::kSigned ? (kSignedBytes ? 0 : -128) : T::kIntOffset;
    PanelVec::I q[8];            // q[g] lane r: bytes 4g .. 4g + 3 of row r's chunk
    PanelVec::F scale[kHalves];  // lane r: row r's scale; the integer offset starts the sums (panel_tile)
};

// Rows [0, rn) of w (ldw bytes apart) into panel[0 .. k / 32); the lanes from rn on are zeros.
template <class T>
void pack_panel(const uint8_t* w, int64_t ldw, int rn, int64_t n_chunks, PanelChunk<T>* panel) {
    using Block = typename T::Block;
    using Chunk = PanelChunk<T>;
    constexpr int kRows = PanelVec::kRows, kChunks = T::kChunks, kHalves = Chunk::kHalves;
    alignas(64) float scale[kHalves][kRows] = {}, offset[kRows] = {};
    __m256i rows[kRows];
    for (int r = rn; r < kRows; ++r) rows[r] = _mm256_setzero_si256();
    for (int64_t b = 0; b < n_chunks / kChunks; ++b) {
        BlockScales<kChunks> s[kRows];
        for (int r = 0; r < rn; ++r) T::scales(reinterpret_cast<const Block*>(w + r * ldw)[b], s[r]);
        for (int j = 0; j < kChunks; ++j) {
            for (int r = 0; r < rn; ++r) {
                rows[r] = T::chunk(reinterpret_cast<const Block*>(w + r * ldw)[b], j);
                if constexpr (T::kSigned && !Chunk::kSignedBytes)
                    rows[r] = _mm256_xor_si256(rows[r], _mm256_set1_epi8(char(0x80)));
                scale[0][r] = s[r].lo[j];
                if constexpr (kHalves == 2) scale[1][r] = s[r].hi[j];
                if constexpr (T::kFloatOffset) offset[r] = s[r].offset[j];
            }
            Chunk& p = panel[b * kChunks + j];
            PanelVec::interleave(rows, p.q);
            for (int h = 0; h < kHalves; ++h) p.scale[h] = PanelVec::load(scale[h]);
            if constexpr (T::kFloatOffset) p.offset = PanelVec::load(offset);
        }
    }
}

// What an activation row brings to a chunk besides its bytes: its d (its super-block's, where the
// rows are quantized per 256), q_sum (the sum of its bytes, what a float offset multiplies) and
// where the integer sums of each half begin, the integer offset times the sum of q, so that no
// float step pays for the integer offset. panel_gemm lays them out by tile, chunk and row, so that
// one pointer reaches a tile's rows at constant distances: six rows' pointers into three arrays had
// run GCC out of general registers (spilled to vector registers and the stack).
struct ChunkScalars {
    float d, q_sum;
    int32_t starts[2];  // the whole chunk's in starts[0] where one scale covers it
};

// Activation rows quantized per 32 (QuantizedRows) or per super-block of 256 (SuperblockRows):
// chunks that share one d.
template <class Rows>
constexpr int kChunksPerScale = std::is_same_v<Rows, SuperblockRows> ? kSuperBlock / 32 : 1;

template <class Chunk>
ChunkScalars chunk_scalars(const QuantizedRows& x, int64_t t, int64_t c) {
    const int64_t at = t * (x.k / 32) + c;
    const int32_t* halves = x.half_sums + 4 * at;  // {first half, 0, second half, 0}
    const int32_t whole = halves[0] + halves[2];
    return {x.d[at], float(whole), {Chunk::kIntOffset * (Chunk::kHalves == 2 ? halves[0] : whole), Chunk::kIntOffset * halves[2]}};
}

template <class Chunk>
ChunkScalars chunk_scalars(const SuperblockRows& x, int64_t t, int64_t c) {
    const int16_t* halves = x.sums + t * (x.k / 16) + 2 * c;
    const int32_t whole = x.sums32[t * (x.k / 32) + c];
    return {x.d[t * (x.k / kSuperBlock) + c / (kSuperBlock / 32)], float(whole),
            {Chunk::kIntOffset * (Chunk::kHalves == 2 ? halves[0] : whole), Chunk::kIntOffset * halves[1]}};
}

// Lines [at, at + 64 * lines) for a tile to ask into L2, one per chunk from its first on: the weights
// of the next panel, spread over the tiles so that the misses to memory overlap the products.
struct PanelPrefetch {
    const char* at;
    int64_t lines;
};

// y[i * ldy + r] = x_i . w_r for RM activation rows and the panel's rows r in store; scalars[c *
// kTileRows + i]: row i's of chunk c. A chunk costs, per activation row, a convert and a multiply-add
// per half (and one for a float offset), and each activation scale one multiply-add: per chunk where
// the rows are quantized per 32, per 8 chunks where per super-block. Q6_K paid 8 float steps for
// dpbusd's 8 while its integer offset was a float step of each half; then 5
// (llamadesk-kernel-bench --isa avx512vnni --types q6_k --rows 14336 --cols 4096 --tokens 512, 2
// Xeon cores, alternating twice: groups 249, 247 -> 292, 294 GMAC/s), and 4 from super-block rows.
// (V is a parameter so that the signed-byte calls, which only PanelVec for AVX2 has, are looked up
// only where they are used.)
template <class T, int RM, class Rows, class V = PanelVec>
void panel_tile(const Rows& x, const ChunkScalars* scalars, const PanelChunk<T>* panel, float* y, int64_t ldy,
                typename V::Mask store, PanelPrefetch prefetch) {
    using Chunk = PanelChunk<T>;
    constexpr int kHalves = Chunk::kHalves, kGroups = 8 / kHalves, kPerScale = kChunksPerScale<Rows>;
    const int64_t n_chunks = x.k / 32;
    typename V::F acc[RM];
#pragma GCC unroll 8
    for (int i = 0; i < RM; ++i) acc[i] = V::zero();
    for (int64_t c0 = 0; c0 < n_chunks; c0 += kPerScale) {
        typename V::F scaled[RM];  // the integer sums times the rows' scales, and the offsets: all but d
#pragma GCC unroll 8
        for (int i = 0; i < RM; ++i) scaled[i] = V::zero();
        for (int64_t c = c0; c < c0 + kPerScale; ++c) {
            if (c < prefetch.lines) prefetch_to_l2(prefetch.at + 64 * c);
            const Chunk& p = panel[c];
            const ChunkScalars* s = scalars + c * PanelVec::kTileRows;
#pragma GCC unroll 2
            for (int h = 0; h < kHalves; ++h) {
                // group by group, so each weight vector is loaded once and the RM dot chains interleave
                typename V::I sum[RM];
#pragma GCC unroll 8
                for (int i = 0; i < RM; ++i) {
                    if constexpr (Chunk::kIntOffset != 0) sum[i] = V::set1_i(s[i].starts[h]);
                    else sum[i] = V::zero_i();
                }
                // Without VNNI a byte dot is maddubs (pairs into 16 bits), madd (into 32) and an add. A pair
                // sum is at most 2 x kMaxByte x 127, so the pair sums of kRun groups add up in 16 bits first
                // (8 groups of weights below 16, 4 below 32, 2 below 64) and a run pays one madd and one add
                // per row. llamadesk-kernel-bench --isa avx2 --rows 14336 --cols 4096 --tokens 512, 2 Xeon
                // cores: Q5_K 152 -> 177 GMAC/s and Q6_K 125 -> 139 with runs of 4 and 2 (Q4_K's 8 before).
                constexpr int kRun = V::kPairSums16 && !Chunk::kSignedBytes ? pair_sums_in_16_bits(T::kMaxByte, kGroups) : 1;
                if constexpr (kRun > 1) {
#pragma GCC unroll 4
                    for (int g0 = h * kGroups; g0 < (h + 1) * kGroups; g0 += kRun) {
                        typename V::I sum16[RM];
#pragma GCC unroll 8
                        for (int i = 0; i < RM; ++i) sum16[i] = V::zero_i();
#pragma GCC unroll 8
                        for (int g = g0; g < g0 + kRun; ++g) {
                            const typename V::I weights = p.q[g];
#pragma GCC unroll 8
                            for (int i = 0; i < RM; ++i) {
                                int32_t four;
                                __builtin_memcpy(&four, x.q + i * x.k + 32 * c + 4 * g, 4);
                                sum16[i] = V::add_byte_pairs(sum16[i], weights, four);
                            }
                        }
#pragma GCC unroll 8
                        for (int i = 0; i < RM; ++i) sum[i] = V::widen16(sum[i], sum16[i]);
                    }
                } else {
#pragma GCC unroll 8
                    for (int g = h * kGroups; g < (h + 1) * kGroups; ++g) {
                        const typename V::I weights = p.q[g];
                        typename V::I magnitudes;
                        if constexpr (Chunk::kSignedBytes) magnitudes = V::magnitudes(weights);
#pragma GCC unroll 8
                        for (int i = 0; i < RM; ++i) {
                            int32_t four;  // the activation's 4 bytes of group g, broadcast to every row
                            __builtin_memcpy(&four, x.q + i * x.k + 32 * c + 4 * g, 4);
                            if constexpr (Chunk::kSignedBytes) sum[i] = V::signed_dot(sum[i], weights, magnitudes, four);
                            else sum[i] = V::dot(sum[i], weights, four);
                        }
                    }
                }
#pragma GCC unroll 8
                for (int i = 0; i < RM; ++i) scaled[i] = V::fma(V::to_float(sum[i]), p.scale[h], scaled[i]);
            }
            if constexpr (T::kFloatOffset) {
#pragma GCC unroll 8
                for (int i = 0; i < RM; ++i) scaled[i] = V::fma(p.offset, V::set1(s[i].q_sum), scaled[i]);
            }
        }
        const ChunkScalars* s = scalars + c0 * PanelVec::kTileRows;
#pragma GCC unroll 8
        for (int i = 0; i < RM; ++i) acc[i] = V::fma(scaled[i], V::set1(s[i].d), acc[i]);
    }
#pragma GCC unroll 8
    for (int i = 0; i < RM; ++i) V::store(y + i * ldy, store, acc[i]);
}

template <class T, int RM, class Rows>
void panel_edge(int rm, const Rows& x, const ChunkScalars* scalars, const PanelChunk<T>* panel, float* y, int64_t ldy,
                PanelVec::Mask store, PanelPrefetch prefetch) {
    if constexpr (RM > 1) {
        if (rm < RM) return panel_edge<T, RM - 1>(rm, x, scalars, panel, y, ldy, store, prefetch);
    }
    panel_tile<T, RM>(x, scalars, panel, y, ldy, store, prefetch);
}

// The product as quantized_gemm's, for as many activation rows as repay a panel's packing: panel by
// panel of the thread's rows, every activation row passing over each panel while it is in L1/L2.
// pack(r, rn, n_chunks, panel) makes the panel of rows [r, r + rn), whose bytes are w + r * ldw ..
// w + (r + rn) * ldw (rows, or the groups that hold them). The weights come from memory once per product, and packing them as
// they came was a seventh of the tiles' time (perf, 8B Q5_K_M prefill): the tiles over one panel
// ask for the next one's bytes.
template <class T, class Rows, class Pack>
void panel_gemm(const Rows& x, int n, const uint8_t* w, int64_t ldw, int rows, float* y, int64_t ldy, Pack pack) {
    constexpr int kRows = PanelVec::kRows, kTileRows = PanelVec::kTileRows;
    const int64_t n_chunks = x.k / 32;
    using Chunk = PanelChunk<T>;
    thread_local std::vector<Chunk> panel;
    // (tile, chunk, kTileRows), laid out once per thread for all the items of the products that
    // share x (a tenth of an 8B Q5_K_M prefill's time where every item laid them out)
    thread_local std::vector<ChunkScalars> scalars;
    thread_local uint64_t scalars_serial = 0;
    panel.resize(size_t(n_chunks));
    const int tiles = (n + kTileRows - 1) / kTileRows;
    if (x.serial == 0 || x.serial != scalars_serial) {
        scalars.resize(size_t(tiles * n_chunks * kTileRows));
        for (int t = 0; t < n; ++t)
            for (int64_t c = 0; c < n_chunks; ++c)
                scalars[size_t(((t / kTileRows) * n_chunks + c) * kTileRows + t % kTileRows)] = chunk_scalars<Chunk>(x, t, c);
        scalars_serial = x.serial;
    }
    for (int r = 0; r < rows; r += kRows) {
        const int rn = rows - r < kRows ? rows - r : kRows;
        pack(r, rn, n_chunks, panel.data());
        const PanelVec::Mask store = PanelVec::lanes(rn);
        const int next_rn = rows - r - kRows < kRows ? rows - r - kRows : kRows;
        const int64_t next_lines = next_rn > 0 ? (next_rn * ldw + 63) / 64 : 0, tile_lines = (next_lines + tiles - 1) / tiles;
        for (int t = 0; t < n; t += kTileRows) {
            const int rm = n - t < kTileRows ? n - t : kTileRows;
            const Rows rows_t = x.from(t);
            const int64_t first = t / kTileRows * tile_lines;
            const PanelPrefetch prefetch =
                first < next_lines ? PanelPrefetch{reinterpret_cast<const char*>(w + (r + kRows) * ldw) + 64 * first,
                                                   std::min(tile_lines, next_lines - first)}
                                   : PanelPrefetch{nullptr, 0};
            panel_edge<T, kTileRows>(rm, rows_t, scalars.data() + (t / kTileRows) * n_chunks * kTileRows, panel.data(),
                                     y + t * ldy + r, ldy, store, prefetch);
        }
    }
}
