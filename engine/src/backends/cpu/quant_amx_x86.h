// Prefill of Q4_K, Q5_K and Q6_K groups, and of Q5_K rows, with AMX tile products: the amx set, which is
// the AVX-512 VNNI set (kernels_amx.cpp, LLAMADESK_CPU_AMX) with these products for 16 or more
// activation rows. quant_kernels_x86.h includes it after the groups (quant_interleaved_x86.h).
//
// One tile product (TDPBSUD, or TDPBSSD for signed weight bytes) multiplies 16 activation rows of
// 64 signed bytes (tile A) into 16 weight rows' 64 bytes laid out as 16 rows of one dword per
// weight row (tile B: the layout of a group's vectors) and adds the sums to 16 x 16 32-bit outputs:
// 16384 multiply-accumulates, 16 times one dpbusd.
//
// The K-quants weigh each sub-block (32 values in Q4_K, 16 in Q6_K) with its own integer scale s,
// which a sum over 64 columns would mix, and a float step per sub-block would cost more than the
// tile products. So each weight is unpacked as its exact integer s * q in two byte planes, high and
// low, and two tile products per 64 columns give the super-block's exact integer sum as
// high << shift + low; one float step per super-block remains:
//   Q4_K: (s >> 4) * q and (s & 15) * q, at most 45 and 225 (shift 4); the mins meet the
//         activations' sums per 32 as in decode (16-bit pairs);
//   Q5_K: q has a fifth bit, so (s >> 3) * q and (s & 7) * q, at most 217 each (shift 3); mins as
//         Q4_K's. A Q5_K matrix that is not interleaved (rows not whole groups) has each
//         super-block's 16 rows gathered into the groups' layout where they lie (gather_q5_k), 44
//         gathers per 16 x 256 weights;
//   Q6_K: s * (q - 32), -4064 .. 4096, as its two's-complement bytes: the high one signed, the
//         low one unsigned (shift 8); the -32 is in the planes, so nothing else remains.
//
// The products go block by block: kAmxBlockTiles tiles of activation rows by kAmxBlockSuperblocks
// super-blocks of columns, their bytes copied into one run (copy_activation_tiles), then per
// super-block each group's super-block is unpacked (8.5 KiB, in L1) and passes over the block's
// tiles. On the 2 Xeon cores measured, the tile products and the vector instructions (the float
// steps, the unpacking) never overlapped, interleaved finely or coarsely: their times add, so the
// vector work per product is kept small rather than hidden.

// AMX tile configuration, palette 1 (Intel SDM, LDTILECFG).
struct alignas(64) TileConfig {
    uint8_t palette_id;
    uint8_t start_row;
    uint8_t reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
};

// Tiles 0, 1: activation rows (A); 2, 3: a group's high and low bytes (B); 4 .. 7: the sums of
// A 0 and A 1 against B 2 and B 3. Every tile is 16 rows of 64 bytes.
inline void configure_tiles() {
    TileConfig config{};
    config.palette_id = 1;
    for (int t = 0; t < 8; ++t) {
        config.colsb[t] = 64;
        config.rows[t] = 16;
    }
    _tile_loadconfig(&config);
}

constexpr int kTileRows = 16;
constexpr int kAmxMinTokens = 16;         // fewer activation rows take the VNNI set's products
constexpr int kAmxBlockTiles = 16;        // a block's activation rows: 16 A tiles, 256 rows
constexpr int kAmxBlockSuperblocks = 4;   // a block's columns: 4 super-blocks, 1024 (256 KiB of rows)

// One group super-block unpacked for the tiles: the byte planes of columns 64m .. 64m + 63 as tile
// B (row j, dword r), and what the float step needs. Tile rows are whole cache lines: a tile load
// from rows that straddle two lines ran at half the speed.
struct alignas(64) Q4_KTiles {
    uint8_t high[4][16][64];  // (s >> 4) * q
    uint8_t low[4][16][64];   // (s & 15) * q
    int32_t mins[4][16];      // q4_k_min_pairs
    float d[16], dmin[16];
};
struct alignas(64) Q6_KTiles {
    uint8_t high[4][16][64];  // s * (q - 32) >> 8, signed
    uint8_t low[4][16][64];   // s * (q - 32) & 255
    float d[16];
};

// Values (Q4_K's nibbles, Q5_K's five bits) times the scale words' high and low parts, split at
// bit Shift: a 16-bit product of a byte pair and a part keeps each byte's product in its byte,
// which it fits (at most 15 * 15 and 31 * 7).
template <int Shift>
inline void store_scaled(__m512i q, __m512i words, uint8_t* high, uint8_t* low) {
    const __m512i low_part = _mm512_set1_epi16((1 << Shift) - 1);
    _mm512_storeu_si512(high, _mm512_mullo_epi16(q, _mm512_srli_epi16(words, Shift)));
    _mm512_storeu_si512(low, _mm512_mullo_epi16(q, _mm512_and_si512(words, low_part)));
}

// Chunks 2m and 2m + 1 of a group super-block of T (Q4_KValues, Q5_KValues) as the byte planes
// of their values times their scales.
template <class T, int Shift, int m>
void unpack_k_run(const typename T::Group& g, const Q4_KGroupScales& s, Q4_KTiles& t) {
    const __m512i scales = m < 2 ? s.scale_lo : s.scale_hi;
    const __m512i first = scale_words<(2 * m) % 4>(scales), second = scale_words<(2 * m) % 4 + 1>(scales);
#pragma GCC unroll 8
    for (int c = 0; c < 8; ++c) {  // dword c of chunk 2m (low nibbles) and of chunk 2m + 1 (high)
        __m512i lo, hi;
        T::values(g, m, c, lo, hi);
        store_scaled<Shift>(lo, first, t.high[m][c], t.low[m][c]);
        store_scaled<Shift>(hi, second, t.high[m][c + 8], t.low[m][c + 8]);
    }
}

// What the float step of a type with mins (Q4_K, Q5_K) needs of a group super-block.
inline void store_k_mins(const Q4_KGroup& g, const Q4_KGroupScales& s, Q4_KTiles& t) {
    __m512i mins[4];
    q4_k_min_pairs(s, mins);
    for (int p = 0; p < 4; ++p) _mm512_storeu_si512(t.mins[p], mins[p]);
    _mm512_storeu_ps(t.d, GroupVec::halves(g.d));
    _mm512_storeu_ps(t.dmin, GroupVec::halves(g.dmin));
}

template <class T, int Shift>
void unpack_k_tiles(const typename T::Group& group, Q4_KTiles& t) {
    const Q4_KGroupScales s = q4_k_group_scales(T::fields(group));
    unpack_k_run<T, Shift, 0>(group, s, t);
    unpack_k_run<T, Shift, 1>(group, s, t);
    unpack_k_run<T, Shift, 2>(group, s, t);
    unpack_k_run<T, Shift, 3>(group, s, t);
    store_k_mins(T::fields(group), s, t);
}

// Super-block b of the 16 rows at w (ldw bytes apart) into a group's layout, gathered dword by dword.
inline void gather_q5_k(const uint8_t* w, int64_t ldw, int64_t b, Q5_KGroup& out) {
    const __m512i rows = _mm512_mullo_epi32(_mm512_set1_epi32(int32_t(ldw)),
                                            _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
    const uint8_t* block = w + b * int64_t(sizeof(quant::BlockQ5_K));
    auto gather = [&](size_t offset) { return _mm512_i32gather_epi32(rows, block + offset, 1); };
    const __m512i halves = gather(offsetof(quant::BlockQ5_K, d));  // d | dmin << 16
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out.g.d), _mm512_cvtepi32_epi16(halves));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out.g.dmin), _mm512_cvtepi32_epi16(_mm512_srli_epi32(halves, 16)));
    for (int word = 0; word < 3; ++word)
        _mm512_storeu_si512(out.g.scales[word], gather(offsetof(quant::BlockQ5_K, scales) + 4 * word));
#pragma GCC unroll 8
    for (int c = 0; c < 8; ++c) _mm512_storeu_si512(out.qh[c], gather(offsetof(quant::BlockQ5_K, qh) + 4 * c));
#pragma GCC unroll 4
    for (int m = 0; m < 4; ++m)
#pragma GCC unroll 8
        for (int c = 0; c < 8; ++c)
            _mm512_storeu_si512(out.g.qs[m][c], gather(offsetof(quant::BlockQ5_K, qs) + 32 * m + 4 * c));
}

// A Q6_K group super-block's values of 4 columns (q6_values) times their sub-block's scale words
// (the signed scale in both 16-bit halves of each lane), minus 32, as the bytes of the 16-bit
// products: low (unsigned) and high (signed).
inline void store_q6_k_planes(__m512i values, __m512i words, uint8_t* high, uint8_t* low) {
    const __m512i low_byte = _mm512_set1_epi16(0x00ff), high_byte = _mm512_set1_epi16(int16_t(0xff00));
    const __m512i even = _mm512_sub_epi16(_mm512_and_si512(values, low_byte), _mm512_set1_epi16(32));
    const __m512i odd = _mm512_sub_epi16(_mm512_srli_epi16(values, 8), _mm512_set1_epi16(32));
    const __m512i p_even = _mm512_mullo_epi16(even, words), p_odd = _mm512_mullo_epi16(odd, words);
    _mm512_storeu_si512(low, _mm512_or_si512(_mm512_and_si512(p_even, low_byte), _mm512_slli_epi16(p_odd, 8)));
    _mm512_storeu_si512(high, _mm512_or_si512(_mm512_srli_epi16(p_even, 8), _mm512_and_si512(p_odd, high_byte)));
}

inline void unpack_q6_k_tiles(const Q6_KGroup& g, Q6_KTiles& t) {
#pragma GCC unroll 8
    for (int chunk = 0; chunk < 8; ++chunk) {  // columns 32 chunk ..: K-tile chunk / 2, rows 8 (chunk % 2) ..
        const int m = chunk / 2, row = 8 * (chunk % 2);
#pragma GCC unroll 2
        for (int half = 0; half < 2; ++half) {  // sub-block 2 chunk + half: dwords 4 half .. 4 half + 3
            const __m512i scale = q6_scale(g, 2 * chunk + half);
            const __m512i words = _mm512_or_si512(_mm512_and_si512(scale, _mm512_set1_epi32(0xffff)), _mm512_slli_epi32(scale, 16));
#pragma GCC unroll 4
            for (int c = 4 * half; c < 4 * half + 4; ++c)
                store_q6_k_planes(q6_values(g, chunk / 4, chunk % 4, c), words, t.high[m][row + c], t.low[m][row + c]);
        }
    }
    _mm512_storeu_ps(t.d, GroupVec::halves(g.d));
}

// Activation rows [row0, row0 + tiles * 16) of q (rows k bytes apart) at blocks [b0, b0 + nb) of
// Block bytes copied so that a tile's 16 rows of one block are one run (out[tile][b][row][Block]),
// with zeros for rows from n on. In place, rows k bytes apart (k is a multiple of 4096 in the 8B
// model) fall in one set of L1 and would evict each other.
template <int Block>
void copy_activation_tiles(const int8_t* q, int64_t k, int n, int64_t row0, int tiles, int64_t b0, int nb, int8_t* out) {
    for (int tile = 0; tile < tiles; ++tile)
        for (int r = 0; r < kTileRows; ++r) {
            const int64_t row = row0 + tile * kTileRows + r;
            for (int b = 0; b < nb; ++b) {
                int8_t* to = out + ((int64_t(tile) * nb + b) * kTileRows + r) * Block;
                if (row < n) __builtin_memcpy(to, q + row * k + (b0 + b) * Block, Block);
                else __builtin_memset(to, 0, Block);
            }
        }
}

// The block's outputs (acc: per group of 16 weight rows, `tiles` tiles of 16 activation rows by 16)
// into y's rows row0 .., a row at a time: by group, each store went to a row 4 * ldy bytes past the
// last, a line in another page, and the stores waited on memory (11 % of the Q6_K kernel's time).
inline void store_block_rows(const float* acc, int groups, int tiles, int block_rows, float* y, int64_t ldy, int64_t row0) {
    const int64_t group_floats = int64_t(tiles) * kTileRows * 16;
    for (int i = 0; i < block_rows; ++i) {
        float* out = y + (row0 + i) * ldy;
        for (int gi = 0; gi < groups; ++gi)
            _mm512_storeu_ps(out + gi * 16, _mm512_loadu_ps(acc + gi * group_floats + i * 16));
    }
}

// acc[i] += the super-block's float step for activation rows row0 + i, i < rows: d * (2^Shift *
// high + low) - dmin * (mins . pairs of sums), times the row's d at super-block b (Q4_K: Shift 4,
// Q5_K: 3).
template <int Shift>
void add_k_mins_tile(const int32_t (*high)[16], const int32_t (*low)[16], int rows, const Q4_KTiles& t,
                     const SuperblockRows& x, int64_t row0, int64_t b, float* acc) {
    const int64_t n_blocks = x.k / kSuperBlock, pairs_stride = x.k / 32;
    const int16_t* pairs = x.sums32 + row0 * pairs_stride + 8 * b;  // 4 dwords per row (sum_pair)
    const float* dx = x.d + row0 * n_blocks + b;
    const __m512 d = _mm512_loadu_ps(t.d), dmin = _mm512_loadu_ps(t.dmin);
    __m512i mins[4];
    for (int p = 0; p < 4; ++p) mins[p] = _mm512_loadu_si512(t.mins[p]);
    for (int i = 0; i < rows; ++i, pairs += pairs_stride, dx += n_blocks, acc += 16) {
        const __m512i sum = _mm512_add_epi32(_mm512_slli_epi32(_mm512_loadu_si512(high[i]), Shift), _mm512_loadu_si512(low[i]));
        __m512i min_sum = _mm512_setzero_si512();
#pragma GCC unroll 4
        for (int p = 0; p < 4; ++p)  // broadcast from memory: a load, not a shuffle
            min_sum = _mm512_dpwssd_epi32(min_sum, mins[p], _mm512_broadcastd_epi32(_mm_loadu_si32(pairs + 2 * p)));
        const __m512 v = _mm512_fmsub_ps(_mm512_cvtepi32_ps(sum), d, _mm512_mul_ps(_mm512_cvtepi32_ps(min_sum), dmin));
        _mm512_storeu_ps(acc, _mm512_fmadd_ps(v, _mm512_set1_ps(*dx), _mm512_loadu_ps(acc)));
    }
}

// As add_k_mins_tile for Q6_K: d * (256 * high + low), times the row's d.
inline void add_q6_k_tile(const int32_t (*high)[16], const int32_t (*low)[16], int rows, const Q6_KTiles& t,
                          const SuperblockRows& x, int64_t row0, int64_t b, float* acc) {
    const int64_t n_blocks = x.k / kSuperBlock;
    const float* dx = x.d + row0 * n_blocks + b;
    const __m512 d = _mm512_loadu_ps(t.d);
    for (int i = 0; i < rows; ++i, dx += n_blocks, acc += 16) {
        const __m512i sum = _mm512_add_epi32(_mm512_slli_epi32(_mm512_loadu_si512(high[i]), 8), _mm512_loadu_si512(low[i]));
        const __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(sum), d);
        _mm512_storeu_ps(acc, _mm512_fmadd_ps(v, _mm512_set1_ps(*dx), _mm512_loadu_ps(acc)));
    }
}

// What the driver below needs of a type: the unpacking of super-block b of 16 weight rows (group gi
// of the rows at w), a prefetch of those bytes, and its float step, whether the high plane is
// signed, and the product for fewer rows than a tile is worth (and, for rows as they lie, for rows
// past the last 16): on groups, the VNNI set's, whose decode tiles give way to its chunk panels at
// kGroupPanelFrom rows (8 to 14 rows, measured on a Xeon with AVX-512 VNNI and no AMX), where the
// amx set had kept decode's group tiles up to kAmxMinTokens.
template <class Group>
const Group& group_superblock(const void* w, int64_t ldw, int gi, int64_t b) {
    return reinterpret_cast<const Group*>(static_cast<const uint8_t*>(w) + gi * kGroupRows * ldw)[b];
}
// A group super-block asked for into L2 one group before its unpacking: groups lie 16 rows apart,
// so each super-block starts a new run of lines that the hardware's prefetchers find too late.
template <class Group>
void prefetch_group_superblock(const void* w, int64_t ldw, int gi, int64_t b, int part, int parts) {
    prefetch_part(&group_superblock<Group>(w, ldw, gi, b), sizeof(Group), part, parts);
}
struct Q4_KAmx {
    using Tiles = Q4_KTiles;
    static constexpr bool kSignedHigh = false;
    static void unpack(const void* w, int64_t ldw, int gi, int64_t b, Tiles& t) {
        unpack_k_tiles<Q4_KValues, 4>(group_superblock<Q4_KGroup>(w, ldw, gi, b), t);
    }
    static constexpr auto prefetch = &prefetch_group_superblock<Q4_KGroup>;
    static constexpr auto add_tile = &add_k_mins_tile<4>;
    static constexpr SuperblockGemmFn fewer_rows = &k_groups_panel_gemm<Q4_KValues>;
};
struct Q5_KAmx {
    using Tiles = Q4_KTiles;
    static constexpr bool kSignedHigh = false;
    static void unpack(const void* w, int64_t ldw, int gi, int64_t b, Tiles& t) {
        unpack_k_tiles<Q5_KValues, 3>(group_superblock<Q5_KGroup>(w, ldw, gi, b), t);
    }
    static constexpr auto prefetch = &prefetch_group_superblock<Q5_KGroup>;
    static constexpr auto add_tile = &add_k_mins_tile<3>;
    static constexpr SuperblockGemmFn fewer_rows = &k_groups_panel_gemm<Q5_KValues>;
};
struct Q5_KRowsAmx : Q5_KAmx {  // a matrix not interleaved: its rows gathered as they lie
    static void unpack(const void* w, int64_t ldw, int gi, int64_t b, Tiles& t) {
        thread_local Q5_KGroup gathered;
        gather_q5_k(static_cast<const uint8_t*>(w) + gi * kGroupRows * ldw, ldw, b, gathered);
        unpack_k_tiles<Q5_KValues, 3>(gathered, t);
    }
    static void prefetch(const void* w, int64_t ldw, int gi, int64_t b, int part, int parts) {
        for (int r = kGroupRows * part / parts; r < kGroupRows * (part + 1) / parts; ++r) {
            const char* block = static_cast<const char*>(w) + (gi * kGroupRows + r) * ldw +
                                b * int64_t(sizeof(quant::BlockQ5_K));
            for (size_t at = 0; at < sizeof(quant::BlockQ5_K); at += 64) prefetch_to_l2(block + at);
            prefetch_to_l2(block + sizeof(quant::BlockQ5_K) - 1);  // blocks straddle lines
        }
    }
    static constexpr SuperblockGemmFn fewer_rows = &superblock_gemm<Q5_K>;
};
struct Q6_KAmx {
    using Tiles = Q6_KTiles;
    static constexpr bool kSignedHigh = true;
    static void unpack(const void* w, int64_t ldw, int gi, int64_t b, Tiles& t) {
        unpack_q6_k_tiles(group_superblock<Q6_KGroup>(w, ldw, gi, b), t);
    }
    static constexpr auto prefetch = &prefetch_group_superblock<Q6_KGroup>;
    static constexpr auto add_tile = &add_q6_k_tile;
    static constexpr SuperblockGemmFn fewer_rows = &q6_k_groups_panel_gemm;
};

// One or two A tiles (a0, a1: 16 rows 256 bytes apart) against a group super-block t: the sums of
// C tiles 4 .. 7 (high 0, low 0, high 1, low 1) into sums.
using TileSums = int32_t[4][16][16];
template <class T, bool Two>
void tile_products(const int8_t* a0, const int8_t* a1, const typename T::Tiles& t, TileSums& sums) {
    _tile_zero(4);
    _tile_zero(5);
    if constexpr (Two) {
        _tile_zero(6);
        _tile_zero(7);
    }
#pragma GCC unroll 4
    for (int m = 0; m < 4; ++m) {
        _tile_loadd(2, t.high[m], 64);
        _tile_loadd(3, t.low[m], 64);
        _tile_loadd(0, a0 + 64 * m, kSuperBlock);
        if constexpr (T::kSignedHigh) _tile_dpbssd(4, 0, 2);
        else _tile_dpbsud(4, 0, 2);
        _tile_dpbsud(5, 0, 3);
        if constexpr (Two) {
            _tile_loadd(1, a1 + 64 * m, kSuperBlock);
            if constexpr (T::kSignedHigh) _tile_dpbssd(6, 1, 2);
            else _tile_dpbsud(6, 1, 2);
            _tile_dpbsud(7, 1, 3);
        }
    }
    _tile_stored(4, sums[0], 64);
    _tile_stored(5, sums[1], 64);
    if constexpr (Two) {
        _tile_stored(6, sums[2], 64);
        _tile_stored(7, sums[3], 64);
    }
}

// superblock_gemm on groups of T for the amx set: tiles from kAmxMinTokens activation rows on,
// T::fewer_rows below. Block by block of activation rows and columns, each group's
// super-blocks are unpacked once and pass over the block's rows. Rows past the last whole group
// (only where rows are read as they lie) take T::fewer_rows.
template <class T>
void groups_amx_gemm(const SuperblockRows& x, int n, const void* w, int64_t ldw, int rows, float* y, int64_t ldy) {
    if (n < kAmxMinTokens) return T::fewer_rows(x, n, w, ldw, rows, y, ldy);
    const int64_t n_blocks = x.k / kSuperBlock;
    const int groups = rows / kGroupRows, n_tiles = (n + kTileRows - 1) / kTileRows;
    if (const int rest = rows - groups * kGroupRows)
        T::fewer_rows(x, n, static_cast<const uint8_t*>(w) + int64_t(groups) * kGroupRows * ldw, ldw, rest,
                  y + groups * kGroupRows, ldy);
    if (!groups) return;
    struct alignas(64) TileRows {  // one tile's 16 rows of a super-block
        int8_t bytes[kTileRows * kSuperBlock];
    };
    thread_local std::vector<TileRows> a_tile_rows(size_t(kAmxBlockTiles * kAmxBlockSuperblocks));
    int8_t* const a_tiles = a_tile_rows.data()->bytes;
    // the group super-block in the tiles (on the stack instead, 4 % slower: kernel bench, 4096 x 4096)
    thread_local std::vector<typename T::Tiles> unpacked(1);
    thread_local std::vector<float> acc;  // per group, the block's rows' 16 outputs
    alignas(64) TileSums sums;
    configure_tiles();
    for (int t0 = 0; t0 < n_tiles; t0 += kAmxBlockTiles) {
        const int tiles = std::min(kAmxBlockTiles, n_tiles - t0);
        const int64_t row0 = int64_t(t0) * kTileRows;
        acc.assign(size_t(groups * tiles * kTileRows * 16), 0.0f);
        for (int64_t b0 = 0; b0 < n_blocks; b0 += kAmxBlockSuperblocks) {
            const int nb = int(std::min<int64_t>(kAmxBlockSuperblocks, n_blocks - b0));
            copy_activation_tiles<kSuperBlock>(x.q, x.k, n, row0, tiles, b0, nb, a_tiles);
            for (int b = 0; b < nb; ++b)
                for (int gi = 0; gi < groups; ++gi) {
                    typename T::Tiles& t = unpacked[0];
                    T::unpack(w, ldw, gi, b0 + b, t);
                    float* group_acc = acc.data() + gi * tiles * kTileRows * 16;
                    for (int tile = 0; tile < tiles; tile += 2) {
                        // the next group's super-block, asked for a part per pair of tiles: at once,
                        // the prefetches waited on each other (6 to 11 % of this driver's samples in
                        // an 8B Q5_K_M prefill)
                        if (gi + 1 < groups) T::prefetch(w, ldw, gi + 1, b0 + b, tile / 2, (tiles + 1) / 2);
                        const int8_t* a0 = a_tiles + (int64_t(tile) * nb + b) * kTileRows * kSuperBlock;
                        const bool two = tile + 1 < tiles;
                        if (two) tile_products<T, true>(a0, a0 + int64_t(nb) * kTileRows * kSuperBlock, t, sums);
                        else tile_products<T, false>(a0, nullptr, t, sums);
                        for (int h = 0; h < (two ? 2 : 1); ++h) {
                            const int64_t first = row0 + (tile + h) * kTileRows;
                            T::add_tile(sums[2 * h], sums[2 * h + 1], int(std::min<int64_t>(kTileRows, n - first)), t, x,
                                        first, b0 + b, group_acc + (tile + h) * kTileRows * 16);
                        }
                    }
                }
        }
        store_block_rows(acc.data(), groups, tiles, int(std::min<int64_t>(n - row0, int64_t(tiles) * kTileRows)), y, ldy, row0);
    }
    _tile_release();
}

constexpr SuperblockGemmFn q4_k_groups_amx_gemm = &groups_amx_gemm<Q4_KAmx>;
constexpr SuperblockGemmFn q5_k_groups_amx_gemm = &groups_amx_gemm<Q5_KAmx>;
constexpr SuperblockGemmFn q5_k_amx_gemm = &groups_amx_gemm<Q5_KRowsAmx>;  // on rows as they lie
constexpr SuperblockGemmFn q6_k_groups_amx_gemm = &groups_amx_gemm<Q6_KAmx>;

// peak_probe's tile half in the amx set: `products` (four tile products into C tiles 4 .. 7 of A
// tiles 0, 1 and B tiles 2, 3, each of `macs` multiply-adds) in a loop, the operands loaded once.
template <class Products>
uint64_t tile_peak_probe(int64_t iterations, uint64_t macs, Products products) {
    alignas(64) static const uint8_t operand[16 * 64] = {};
    configure_tiles();
    _tile_loadd(0, operand, 64);
    _tile_loadd(1, operand, 64);
    _tile_loadd(2, operand, 64);
    _tile_loadd(3, operand, 64);
    _tile_zero(4);
    _tile_zero(5);
    _tile_zero(6);
    _tile_zero(7);
    for (int64_t it = 0; it < iterations; ++it) products();
    alignas(64) int32_t sums[16][16];
    _tile_stored(4, sums, 64);
    _tile_release();
    volatile int32_t sink = sums[0][0];
    (void)sink;
    return uint64_t(iterations) * 4 * macs;
}

uint64_t amx_peak_probe(int64_t iterations) {
    return tile_peak_probe(iterations, 16 * 16 * 64, [] {
        _tile_dpbsud(4, 0, 2);
        _tile_dpbsud(5, 0, 3);
        _tile_dpbsud(6, 1, 2);
        _tile_dpbsud(7, 1, 3);
    });
}
