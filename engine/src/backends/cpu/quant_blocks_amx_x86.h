// Prefill of Q8_0 and Q4_0 with AMX tile products: the amx set, from kAmxMinTokens activation rows
// on. quant_kernels_x86.h includes it after quant_amx_x86.h, whose activation copy it shares.
//
// These types scale every block of 32 weights by a float of its own, and the activations come
// quantized per 32 with a float each (QuantizedRows), so a sum may not run past one block: each
// tile product covers one block (tile A: 16 activation rows of its 32 bytes; tile B: 16 weight
// rows' 32 bytes as 8 rows of one dword per weight row) and is followed by its float step,
// acc += d_x * d_w * sum, in vectors of 16 weight rows. Q4_0's nibbles are unpacked to signed
// bytes (q - 8), so both types take TDPBSSD and no offset remains. The float step costs more than
// the product: the whole runs about 1.6x the VNNI panels (kernel bench, 4096 x 4096, 512 rows).

// Tiles 0, 1: A (16 rows of 32 bytes); 2, 3: B (8 rows of 64 bytes); 4, 5: C, A 0 times B 2 and
// A 1 times B 3 (two blocks in flight).
inline void configure_block_tiles() {
    TileConfig config{};
    config.palette_id = 1;
    for (int t : {0, 1}) {
        config.colsb[t] = kActivationBlock;
        config.rows[t] = kTileRows;
    }
    for (int t : {2, 3}) {
        config.colsb[t] = 64;
        config.rows[t] = kActivationBlock / 4;
    }
    for (int t : {4, 5}) {
        config.colsb[t] = 64;
        config.rows[t] = kTileRows;
    }
    _tile_loadconfig(&config);
}

// A block of 16 weight rows as tile B (row j: dword j of each row's 32 signed bytes) and the rows'
// scales.
struct alignas(64) BlockTile {
    int8_t b[kActivationBlock / 4][64];
    float d[16];
};

// Block b of the 16 rows at w (ldw bytes apart), gathered dword by dword.
struct Q8_0Amx {
    using Block = quant::BlockQ8_0;
    static void unpack(const uint8_t* w, __m512i rows, int64_t b, BlockTile& t) {
        const uint8_t* block = w + b * int64_t(sizeof(Block));
#pragma GCC unroll 8
        for (int j = 0; j < 8; ++j)
            _mm512_store_si512(t.b[j], _mm512_i32gather_epi32(rows, block + offsetof(Block, qs) + 4 * j, 1));
        const __m512i d = _mm512_i32gather_epi32(rows, block + offsetof(Block, d), 1);
        _mm512_store_ps(t.d, _mm512_cvtph_ps(_mm512_cvtepi32_epi16(d)));
    }
};
// q: the packed bytes 4j .. 4j + 3 of 16 Q4_0 rows; their elements 4j .. 4j + 3 (low nibbles) and
// 16 + 4j .. (high) as signed bytes q - 8, into rows j and j + 4 of t.
inline void store_q4_0_nibbles(__m512i q, int j, BlockTile& t) {
    const __m512i low4 = _mm512_set1_epi8(0x0f), eight = _mm512_set1_epi8(8);
    _mm512_store_si512(t.b[j], _mm512_sub_epi8(_mm512_and_si512(q, low4), eight));
    _mm512_store_si512(t.b[j + 4], _mm512_sub_epi8(_mm512_and_si512(_mm512_srli_epi32(q, 4), low4), eight));
}
struct Q4_0Amx {
    using Block = quant::BlockQ4_0;
    static void unpack(const uint8_t* w, __m512i rows, int64_t b, BlockTile& t) {
        const uint8_t* block = w + b * int64_t(sizeof(Block));
#pragma GCC unroll 4
        for (int j = 0; j < 4; ++j) store_q4_0_nibbles(_mm512_i32gather_epi32(rows, block + offsetof(Block, qs) + 4 * j, 1), j, t);
        const __m512i d = _mm512_i32gather_epi32(rows, block + offsetof(Block, d), 1);
        _mm512_store_ps(t.d, _mm512_cvtph_ps(_mm512_cvtepi32_epi16(d)));
    }
};
// Block b of the group at w (quant_blocks_interleaved_x86.h): its vectors are already tile B's rows.
struct Q4_0GroupAmx {
    static void unpack(const uint8_t* w, __m512i, int64_t b, BlockTile& t) {
        const Q4_0Group& g = reinterpret_cast<const Q4_0Group*>(w)[b];
#pragma GCC unroll 4
        for (int j = 0; j < 4; ++j) store_q4_0_nibbles(_mm512_loadu_si512(g.qs[j]), j, t);
        _mm512_store_ps(t.d, _mm512_cvtph_ps(load256(g.d)));
    }
};

// acc[i] += d_x[i * stride] * t.d * sums[i] for the tile's rows i < rows.
inline void add_block_sums(const int32_t (*sums)[16], const BlockTile& t, const float* dx, int64_t stride, int rows,
                           __m512* acc) {
    const __m512 d = _mm512_load_ps(t.d);
#pragma GCC unroll 16
    for (int i = 0; i < kTileRows; ++i) {
        const __m512 scale = _mm512_mul_ps(d, _mm512_set1_ps(i < rows ? dx[i * stride] : 0.0f));
        acc[i] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_load_si512(sums[i])), scale, acc[i]);
    }
}

// quantized_gemm of T for the amx set: tiles from kAmxMinTokens activation rows on, the panels'
// product below and for rows past the last 16. Block by block of activation rows and columns, as
// groups_amx_gemm: each weight block of 16 rows is unpacked once and passes over the block's rows.
template <class T, QuantizedGemmFn Panels>
void blocks_amx_gemm(const QuantizedRows& x, int n, const void* weights, int64_t ldw, int rows, int k, float* y,
                     int64_t ldy) {
    if (n < kAmxMinTokens) return Panels(x, n, weights, ldw, rows, k, y, ldy);
    const auto* w = static_cast<const uint8_t*>(weights);
    const int groups = rows / kTileRows, n_tiles = (n + kTileRows - 1) / kTileRows;
    if (const int rest = rows - groups * kTileRows)
        Panels(x, n, w + int64_t(groups) * kTileRows * ldw, ldw, rest, k, y + groups * kTileRows, ldy);
    if (!groups) return;
    const int64_t n_blocks = k / kActivationBlock;
    constexpr int kChunkBlocks = kAmxBlockSuperblocks * kSuperBlock / kActivationBlock;
    struct alignas(64) TileRows {  // one tile's 16 rows of a chunk's blocks
        int8_t bytes[kTileRows * kChunkBlocks * kActivationBlock];
    };
    thread_local std::vector<TileRows> a_tile_rows = std::vector<TileRows>(size_t(kAmxBlockTiles));
    thread_local std::vector<BlockTile> unpacked = std::vector<BlockTile>(size_t(kChunkBlocks));  // a group's blocks of the chunk
    thread_local std::vector<float> acc;  // per group, the block's rows' 16 outputs
    // (a thread_local's every use calls its wrapper: the loops below use plain pointers)
    int8_t* const a_tiles = a_tile_rows[0].bytes;
    BlockTile* const blocks = unpacked.data();
    alignas(64) int32_t sums[2][16][16];
    const __m512i row_offsets = _mm512_mullo_epi32(_mm512_set1_epi32(int32_t(ldw)),
                                                   _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
    configure_block_tiles();
    for (int t0 = 0; t0 < n_tiles; t0 += kAmxBlockTiles) {
        const int tiles = std::min(kAmxBlockTiles, n_tiles - t0);
        const int64_t row0 = int64_t(t0) * kTileRows;
        acc.assign(size_t(groups * tiles * kTileRows * 16), 0.0f);
        float* const acc_data = acc.data();
        for (int64_t b0 = 0; b0 < n_blocks; b0 += kChunkBlocks) {
            const int nb = int(std::min<int64_t>(kChunkBlocks, n_blocks - b0));
            copy_activation_tiles<kActivationBlock>(x.q, x.k, n, row0, tiles, b0, nb, a_tiles);
            for (int gi = 0; gi < groups; ++gi) {
                for (int b = 0; b < nb; ++b) T::unpack(w + int64_t(gi) * kTileRows * ldw, row_offsets, b0 + b, blocks[b]);
                for (int tile = 0; tile < tiles; ++tile) {
                    // a tile's 16 x 16 sums stay in registers over the chunk
                    float* tile_acc = acc_data + (int64_t(gi) * tiles + tile) * kTileRows * 16;
                    __m512 sum[kTileRows];
#pragma GCC unroll 16
                    for (int i = 0; i < kTileRows; ++i) sum[i] = _mm512_loadu_ps(tile_acc + 16 * i);
                    const int64_t first = row0 + tile * kTileRows;
                    const int valid = int(std::min<int64_t>(kTileRows, n - first));
                    const float* dx = x.d + first * n_blocks + b0;
                    const int8_t* a = a_tiles + int64_t(tile) * nb * kTileRows * kActivationBlock;
                    constexpr int64_t kTileBytes = kTileRows * kActivationBlock;
                    // blocks alternate between C tiles 4 and 5; a block's product is issued
                    // before the float step of the one two before it, so that they overlap
                    auto product_even = [&](int b) {
                        _tile_loadd(2, blocks[b].b, 64);
                        _tile_loadd(0, a + b * kTileBytes, kActivationBlock);
                        _tile_zero(4);
                        _tile_dpbssd(4, 0, 2);
                    };
                    auto product_odd = [&](int b) {
                        _tile_loadd(3, blocks[b].b, 64);
                        _tile_loadd(1, a + b * kTileBytes, kActivationBlock);
                        _tile_zero(5);
                        _tile_dpbssd(5, 1, 3);
                    };
                    product_even(0);
                    if (nb > 1) product_odd(1);
                    for (int b = 0; b < nb; b += 2) {
                        _tile_stored(4, sums[0], 64);
                        if (b + 2 < nb) product_even(b + 2);
                        add_block_sums(sums[0], blocks[b], dx + b, n_blocks, valid, sum);
                        if (b + 1 < nb) {
                            _tile_stored(5, sums[1], 64);
                            if (b + 3 < nb) product_odd(b + 3);
                            add_block_sums(sums[1], blocks[b + 1], dx + b + 1, n_blocks, valid, sum);
                        }
                    }
#pragma GCC unroll 16
                    for (int i = 0; i < kTileRows; ++i) _mm512_storeu_ps(tile_acc + 16 * i, sum[i]);
                }
            }
        }
        store_block_rows(acc_data, groups, tiles, int(std::min<int64_t>(n - row0, int64_t(tiles) * kTileRows)), y, ldy, row0);
    }
    _tile_release();
}
