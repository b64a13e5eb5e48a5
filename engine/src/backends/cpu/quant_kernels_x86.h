// Block-quantized weights times quantized activations in x86 integer instructions, written once
// for the x86 kernel sets. kernels_<isa>.cpp includes it inside its anonymous namespace after
// defining kQuantTileRows, kQuantTileCols (activation rows x weight rows of the micro-tile) and
// either LLAMADESK_CPU_VNNI (512-bit dpbusd) or
//   Int8Dot::dot(acc, u, s): acc plus, in each of 8 int32 lanes, the sum of 4 products u[i] * s[i]
//                            (u unsigned bytes, s signed), 256 bits.
//
// Every weight type is read as chunks of 32 elements (one block of Q8_0..Q5_1, 8 per K-quant
// super-block): unsigned integers q with weight = scale * (q + kIntOffset) + offset, the scale
// possibly differing between the chunk's halves of 16 (Q6_K's sub-blocks). Against an activation
// block (x = d * q_x) that is d * scale . (dot(q, q_x) + kIntOffset * sum(q_x)) + offset * d_sum:
// the integer offset starts the integer accumulator (from the activation's half sums) and the float
// offset (Q4_1, Q5_1, K-quant mins) is one multiply per chunk, so no element is shifted. Q8_0's
// signed bytes become unsigned with offset -128 for dpbusd; with maddubs, whose 16-bit pair sums
// would saturate, they go through |q| and q_x with q's sign.
//
// Only the block layouts of blocks.h are used here, never its inline helpers (see kernels.h).

// One chunk's scales (low half; high half where they differ) and float offsets, for every chunk
// of a block.
template <int N>
struct BlockScales {
    float lo[N], hi[N], offset[N];
};

inline float half_to_float(uint16_t h) { return _cvtsh_ss(h); }

inline __m256i load256(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

// Decode is bound by how many cache misses a core keeps in flight. Each step of a decode tile asks,
// into L2, for bytes [from, from + n) of the rows kPrefetchRows ahead (next; null when not
// decoding): its share of them, so they stream in evenly while this tile is computed. Measured on 2
// Xeon cores (128256 x 4096 Q4_K, far larger than the caches): 19-20 GB/s against 14.5 with the
// whole next tile asked for at once into L1; the same 12 or 16 rows ahead; worse non-temporally.
constexpr int kPrefetchRows = 8;

inline void prefetch_ahead(const uint8_t* next, int64_t from, int64_t n) {
    if (next)
        for (int64_t at = from; at < from + n; at += 64) prefetch_to_l2(next + at);
}

// Part `part` of `parts` of the n bytes at p asked for into L2, whatever p's alignment: a loop that
// asks for a part per pass spreads the prefetches, which issued at once waited on each other.
inline void prefetch_part(const void* p, size_t n, int part, int parts) {
    const size_t lines = (n + 63) / 64 + 1;  // the last partial line, wherever the bytes start
    const char* bytes = static_cast<const char*>(p);
    for (size_t line = lines * size_t(part) / size_t(parts); line < lines * size_t(part + 1) / size_t(parts); ++line)
        prefetch_to_l2(bytes + std::min(line * 64, n - 1));
}

// 16 packed bytes: elements 0..15 from the low nibbles, 16..31 from the high ones.
inline __m256i nibbles(const uint8_t* packed) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(packed));
    return _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(v, 4), v), _mm256_set1_epi8(15));
}

// Bit i of the little-endian 32 bits at p as 16 in byte i (the fifth bit of Q5_0/Q5_1).
inline __m256i fifth_bits(const uint8_t* p) {
    int32_t bits;
    __builtin_memcpy(&bits, p, 4);
    const __m256i spread = _mm256_shuffle_epi8(_mm256_set1_epi32(bits),
                                               _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202,
                                                                 0x0101010101010101, 0));
    const __m256i bit = _mm256_set1_epi64x(int64_t(0x8040201008040201ull));
    return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit), _mm256_set1_epi8(16));
}

// (v >> shift) & mask in every byte.
inline __m256i byte_bits(__m256i v, int shift, int mask) {
    return _mm256_and_si256(_mm256_srl_epi16(v, _mm_cvtsi32_si128(shift)), _mm256_set1_epi8(char(mask)));
}

// The 8 six-bit scales and mins of a Q4_K/Q5_K super-block (layout in blocks.h), four at a time
// in 32-bit words, times d and -dmin.
template <class B>
inline void k_block_scales(const B& b, BlockScales<8>& s) {
    uint32_t w[3];
    __builtin_memcpy(w, b.scales, 12);
    const uint32_t scale_lo = w[0] & 0x3f3f3f3f, min_lo = w[1] & 0x3f3f3f3f;
    const uint32_t scale_hi = (w[2] & 0x0f0f0f0f) | ((w[0] >> 6) & 0x03030303) << 4;
    const uint32_t min_hi = ((w[2] >> 4) & 0x0f0f0f0f) | ((w[1] >> 6) & 0x03030303) << 4;
    auto widen = [](uint32_t lo, uint32_t hi) {
        return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_set_epi32(0, 0, int(hi), int(lo))));
    };
    _mm256_storeu_ps(s.lo, _mm256_mul_ps(widen(scale_lo, scale_hi), _mm256_set1_ps(half_to_float(b.d))));
    _mm256_storeu_ps(s.offset, _mm256_mul_ps(widen(min_lo, min_hi), _mm256_set1_ps(-half_to_float(b.dmin))));
}

// Defaults of a type's description; each type overrides what differs.
struct Chunked32 {
    static constexpr int kMaxByte = 255;  // the largest unsigned weight byte (what 16-bit sums can hold)
    static constexpr int kChunks = 1;
    static constexpr int kIntOffset = 0;
    static constexpr bool kFloatOffset = false;
    static constexpr bool kSigned = false;
    static constexpr bool kHalfScales = false;
};

struct Q8_0 : Chunked32 {
    using Block = quant::BlockQ8_0;
    static constexpr bool kSigned = true;
    static void scales(const Block& b, BlockScales<1>& s) { s.lo[0] = half_to_float(b.d); }
    static __m256i chunk(const Block& b, int) { return load256(b.qs); }
};

struct Q4_0 : Chunked32 {
    static constexpr int kMaxByte = 15;
    using Block = quant::BlockQ4_0;
    static constexpr int kIntOffset = -8;
    static void scales(const Block& b, BlockScales<1>& s) { s.lo[0] = half_to_float(b.d); }
    static __m256i chunk(const Block& b, int) { return nibbles(b.qs); }
};

struct Q4_1 : Chunked32 {
    static constexpr int kMaxByte = 15;
    using Block = quant::BlockQ4_1;
    static constexpr bool kFloatOffset = true;
    static void scales(const Block& b, BlockScales<1>& s) {
        s.lo[0] = half_to_float(b.d);
        s.offset[0] = half_to_float(b.m);
    }
    static __m256i chunk(const Block& b, int) { return nibbles(b.qs); }
};

struct Q5_0 : Chunked32 {
    static constexpr int kMaxByte = 31;
    using Block = quant::BlockQ5_0;
    static constexpr int kIntOffset = -16;
    static void scales(const Block& b, BlockScales<1>& s) { s.lo[0] = half_to_float(b.d); }
    static __m256i chunk(const Block& b, int) { return _mm256_or_si256(nibbles(b.qs), fifth_bits(b.qh)); }
};

struct Q5_1 : Chunked32 {
    static constexpr int kMaxByte = 31;
    using Block = quant::BlockQ5_1;
    static constexpr bool kFloatOffset = true;
    static void scales(const Block& b, BlockScales<1>& s) {
        s.lo[0] = half_to_float(b.d);
        s.offset[0] = half_to_float(b.m);
    }
    static __m256i chunk(const Block& b, int) { return _mm256_or_si256(nibbles(b.qs), fifth_bits(b.qh)); }
};

struct Q4_K : Chunked32 {
    static constexpr int kMaxByte = 15;
    using Block = quant::BlockQ4_K;
    static constexpr int kChunks = 8;
    static constexpr bool kFloatOffset = true;
    static void scales(const Block& b, BlockScales<8>& s) { k_block_scales(b, s); }
    static __m256i chunk(const Block& b, int j) { return byte_bits(load256(b.qs + 32 * (j / 2)), 4 * (j % 2), 15); }
};

struct Q5_K : Chunked32 {
    static constexpr int kMaxByte = 31;
    using Block = quant::BlockQ5_K;
    static constexpr int kChunks = 8;
    static constexpr bool kFloatOffset = true;
    static void scales(const Block& b, BlockScales<8>& s) { k_block_scales(b, s); }
    static __m256i chunk(const Block& b, int j) {
        const __m256i low = byte_bits(load256(b.qs + 32 * (j / 2)), 4 * (j % 2), 15);
        return _mm256_or_si256(low, _mm256_slli_epi16(byte_bits(load256(b.qh), j, 1), 4));
    }
};

struct Q6_K : Chunked32 {
    static constexpr int kMaxByte = 63;
    using Block = quant::BlockQ6_K;
    static constexpr int kChunks = 8;
    static constexpr int kIntOffset = -32;
    static constexpr bool kHalfScales = true;
    static void scales(const Block& b, BlockScales<8>& s) {
        const float d = half_to_float(b.d);
        for (int j = 0; j < 8; ++j) {
            s.lo[j] = d * float(b.scales[2 * j]);
            s.hi[j] = d * float(b.scales[2 * j + 1]);
        }
    }
    // Chunk j = 4h + c of half h: low 4 bits from ql (c = 0, 1 the low nibbles of its two 32-byte
    // runs, c = 2, 3 their high nibbles), 2 high bits from bits 2c of qh.
    static __m256i chunk(const Block& b, int j) {
        const int h = j / 4, c = j % 4;
        const __m256i low = byte_bits(load256(b.ql + 64 * h + 32 * (c % 2)), 4 * (c / 2), 15);
        const __m256i high = _mm256_slli_epi16(byte_bits(load256(b.qh + 32 * h), 2 * c, 3), 4);
        return _mm256_or_si256(low, high);
    }
};

#if !defined(LLAMADESK_CPU_VNNI)
inline float hsum256(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

// Q6_K's tile without VNNI (the classifier of Llama 3's Q4_K_M files, and half their ffn_down and
// attn_v). Its sub-block scales are small signed integers, so they go into the integer dot
// (madd_epi16 against the two halves' scales instead of ones), the -32 offset comes off the 16-bit
// pair sums, and a super-block's chunks gather in one float sum per activation and weight row that
// meets the super-block's d once: per chunk and pair of rows, one conversion and one fused
// multiply-add. The generic tile, with two float scales per chunk, streamed it at 2/3 of Q4_K's rate.
template <int RM, int RN>
void q6_k_tile(const QuantizedRows& x, const uint8_t* w, int64_t ldw, float* y, int64_t ldy, const uint8_t* next) {
    using Block = quant::BlockQ6_K;
    const int64_t k = x.k, n_chunks = k / 32, n_blocks = n_chunks / 8;
    const __m256i thirty_two = _mm256_set1_epi8(32);
    __m256 acc[RM][RN];
#pragma GCC unroll 4
    for (int i = 0; i < RM; ++i)
#pragma GCC unroll 4
        for (int r = 0; r < RN; ++r) acc[i][r] = _mm256_setzero_ps();

    for (int64_t b = 0; b < n_blocks; ++b) {
        prefetch_ahead(next, b * RN * int64_t(sizeof(Block)), RN * int64_t(sizeof(Block)));
        const Block* block[RN];
        __m128i scales[RN];
        __m256 block_acc[RM][RN];
#pragma GCC unroll 4
        for (int r = 0; r < RN; ++r) {
            block[r] = reinterpret_cast<const Block*>(w + r * ldw) + b;
            scales[r] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block[r]->scales));
#pragma GCC unroll 4
            for (int i = 0; i < RM; ++i) block_acc[i][r] = _mm256_setzero_ps();
        }
#pragma GCC unroll 8
        for (int j = 0; j < 8; ++j) {
            const int64_t c = b * 8 + j;
            // bytes 0..7 of the pick select scale 2j (the chunk's low 16 values), bytes 8..15 scale 2j + 1
            constexpr uint64_t kBytes = 0x0101010101010101ULL;
            const __m128i pick = _mm_set_epi64x(int64_t(kBytes * (2 * j + 1)), int64_t(kBytes * (2 * j)));
            __m256i q[RN], scale[RN];
#pragma GCC unroll 4
            for (int r = 0; r < RN; ++r) {
                q[r] = Q6_K::chunk(*block[r], j);
                scale[r] = _mm256_cvtepi8_epi16(_mm_shuffle_epi8(scales[r], pick));
            }
#pragma GCC unroll 4
            for (int i = 0; i < RM; ++i) {
                const __m256i a = load256(x.q + i * k + 32 * c);
                const __m256i offset = _mm256_maddubs_epi16(thirty_two, a);
                const __m256 da = _mm256_set1_ps(x.d[i * n_chunks + c]);
#pragma GCC unroll 4
                for (int r = 0; r < RN; ++r) {
                    const __m256i pairs = _mm256_sub_epi16(_mm256_maddubs_epi16(q[r], a), offset);
                    const __m256i dot = _mm256_madd_epi16(pairs, scale[r]);
                    block_acc[i][r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), da, block_acc[i][r]);
                }
            }
        }
#pragma GCC unroll 4
        for (int r = 0; r < RN; ++r) {
            const __m256 d = _mm256_set1_ps(half_to_float(block[r]->d));
#pragma GCC unroll 4
            for (int i = 0; i < RM; ++i) acc[i][r] = _mm256_fmadd_ps(block_acc[i][r], d, acc[i][r]);
        }
    }
    for (int i = 0; i < RM; ++i)
        for (int r = 0; r < RN; ++r) y[i * ldy + r] = hsum256(acc[i][r]);
}

// y (RM, RN) = x (RM activation rows) . w (RN rows, ldw bytes apart)^T. Each weight chunk is
// unpacked once and used by all RM activation rows.
template <class T, int RM, int RN>
void quantized_tile(const QuantizedRows& x, const uint8_t* w, int64_t ldw, float* y, int64_t ldy, const uint8_t* next) {
    static_assert(!T::kHalfScales, "Q6_K has its own tile");
    using Block = typename T::Block;
    constexpr int kChunks = T::kChunks;
    const int64_t k = x.k, n_chunks = k / 32, n_blocks = n_chunks / kChunks;
    __m256 acc[RM][RN];
    float offsets[RM][RN];  // float offsets of 32-element blocks; K-quants fold theirs into acc
#pragma GCC unroll 4
    for (int i = 0; i < RM; ++i)
#pragma GCC unroll 4
        for (int r = 0; r < RN; ++r) {
            acc[i][r] = _mm256_setzero_ps();
            offsets[i][r] = 0.0f;
        }

    for (int64_t b = 0; b < n_blocks; ++b) {
        prefetch_ahead(next, b * RN * int64_t(sizeof(Block)), RN * int64_t(sizeof(Block)));
        const Block* block[RN];
        BlockScales<kChunks> scales[RN];
#pragma GCC unroll 4
        for (int r = 0; r < RN; ++r) {
            block[r] = reinterpret_cast<const Block*>(w + r * ldw) + b;
            T::scales(*block[r], scales[r]);
        }
#pragma GCC unroll 8
        for (int j = 0; j < kChunks; ++j) {
            const int64_t c = b * kChunks + j;
            __m256i q[RN], magnitude[RN];
            __m256 scale[RN];
#pragma GCC unroll 4
            for (int r = 0; r < RN; ++r) {
                q[r] = T::chunk(*block[r], j);
                if constexpr (T::kSigned) magnitude[r] = _mm256_abs_epi8(q[r]);
                scale[r] = _mm256_set1_ps(scales[r].lo[j]);
            }
#pragma GCC unroll 4
            for (int i = 0; i < RM; ++i) {
                const __m256i a = load256(x.q + i * k + 32 * c);
                const __m256 d = _mm256_set1_ps(x.d[i * n_chunks + c]);
                __m256i start = _mm256_setzero_si256();
                if constexpr (T::kIntOffset != 0) {
                    const __m128i halves = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x.half_sums + 4 * (i * n_chunks + c)));
                    start = _mm256_mullo_epi32(_mm256_cvtepu32_epi64(halves), _mm256_set1_epi32(T::kIntOffset));
                }
#pragma GCC unroll 4
                for (int r = 0; r < RN; ++r) {
                    __m256i dot;
                    if constexpr (T::kSigned) dot = Int8Dot::dot(start, magnitude[r], _mm256_sign_epi8(a, q[r]));
                    else dot = Int8Dot::dot(start, q[r], a);
                    acc[i][r] = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(dot), d), scale[r], acc[i][r]);
                    if constexpr (T::kFloatOffset && kChunks == 1)
                        offsets[i][r] += scales[r].offset[0] * x.d_sum[i * n_chunks + c];
                }
            }
        }
        if constexpr (T::kFloatOffset && kChunks == 8) {  // the 8 mins against the 8 sums, lane by lane
#pragma GCC unroll 4
            for (int i = 0; i < RM; ++i) {
                const __m256 sums = _mm256_loadu_ps(x.d_sum + i * n_chunks + b * 8);
#pragma GCC unroll 4
                for (int r = 0; r < RN; ++r) acc[i][r] = _mm256_fmadd_ps(_mm256_loadu_ps(scales[r].offset), sums, acc[i][r]);
            }
        }
    }
    for (int i = 0; i < RM; ++i)
        for (int r = 0; r < RN; ++r) y[i * ldy + r] = hsum256(acc[i][r]) + offsets[i][r];
}
#else
// With AVX-512 VNNI the tile takes two chunks per 512-bit instruction, which halves the work per
// pair of rows: the dot, the conversion and the two float steps. The 256-bit chunks of two
// consecutive chunks (two blocks of 32, or chunks 2m and 2m + 1 of a super-block) sit in the low
// and high halves; the activation scales, the scales and the integer offsets follow that order.

inline __m512i join(__m256i lo, __m256i hi) { return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1); }

inline __m512 join(__m256 lo, __m256 hi) {
    return _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(lo)), _mm256_castps_pd(hi), 1));
}

// acc[i][r] += the products of chunks c, c + 1 of RM activation rows with q[r] (their weights).
template <class T, int RM, int RN>
inline void wide_step(const QuantizedRows& x, int64_t c, const __m512i (&q)[RN], const __m512 (&scale)[RN],
                      __m512 (&acc)[RM][RN]) {
    constexpr int kIntOffset = T::kSigned ? -128 : T::kIntOffset;
    const int64_t n_chunks = x.k / 32;
    const __m512i spread = _mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
#pragma GCC unroll 4
    for (int i = 0; i < RM; ++i) {
        const __m512i a = _mm512_loadu_si512(x.q + i * x.k + 32 * c);
        int64_t scales;  // the two chunks' activation scales (memcpy: floats are only 4-byte aligned)
        __builtin_memcpy(&scales, x.d + i * n_chunks + c, 8);
        const __m128 two = _mm_castsi128_ps(_mm_cvtsi64_si128(scales));
        const __m512 d = _mm512_permutexvar_ps(spread, _mm512_castps128_ps512(two));
        __m512i start = _mm512_setzero_si512();
        if constexpr (kIntOffset != 0)
            start = _mm512_mullo_epi32(_mm512_cvtepu32_epi64(load256(x.half_sums + 4 * (i * n_chunks + c))),
                                       _mm512_set1_epi32(kIntOffset));
#pragma GCC unroll 4
        for (int r = 0; r < RN; ++r) {
            const __m512i dot = _mm512_dpbusd_epi32(start, q[r], a);
            acc[i][r] = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(dot), d), scale[r], acc[i][r]);
        }
    }
}

// Every 16-bit lane of the low 256 bits shifted right by lo, of the high 256 bits by hi.
inline __m512i shift_halves(__m512i v, int lo, int hi) {
    return _mm512_srlv_epi16(v, _mm512_inserti64x4(_mm512_set1_epi16(short(lo)), _mm256_set1_epi16(short(hi)), 1));
}

// Two blocks of 32 (b0 in the low half): their weights as unsigned bytes. Nibble types unpack
// both at once: each 16-byte run twice, the second copy shifted by 4.
template <class T>
inline __m512i wide_blocks(const typename T::Block& b0, const typename T::Block& b1) {
    if constexpr (std::is_same_v<T, Q4_0> || std::is_same_v<T, Q4_1>) {
        const __m512i v = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_broadcastsi128_si256(
                                                 _mm_loadu_si128(reinterpret_cast<const __m128i*>(b0.qs)))),
                                             _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b1.qs))), 1);
        const __m512i by = _mm512_set_epi64(0x0004000400040004, 0x0004000400040004, 0, 0, 0x0004000400040004,
                                            0x0004000400040004, 0, 0);  // per 128 bits: 0, 4, 0, 4
        return _mm512_and_si512(_mm512_srlv_epi16(v, by), _mm512_set1_epi8(15));
    } else {
        const __m512i q = join(T::chunk(b0, 0), T::chunk(b1, 0));
        return T::kSigned ? _mm512_xor_si512(q, _mm512_set1_epi8(char(0x80))) : q;
    }
}

// Chunks 2m and 2m + 1 of a super-block as unsigned bytes; both share their low bits' bytes (Q4_K,
// Q5_K: low and high nibbles of one 32-byte run; Q6_K: one 64-byte run) and their high bits' bytes.
template <class T>
inline __m512i wide_chunks(const typename T::Block& b, int m) {
    const __m512i mask4 = _mm512_set1_epi8(15);
    if constexpr (std::is_same_v<T, Q4_K> || std::is_same_v<T, Q5_K>) {
        const __m512i low = _mm512_and_si512(shift_halves(_mm512_broadcast_i64x4(load256(b.qs + 32 * m)), 0, 4), mask4);
        if constexpr (std::is_same_v<T, Q4_K>) {
            return low;
        } else {
            const __m512i high = shift_halves(_mm512_broadcast_i64x4(load256(b.qh)), 2 * m, 2 * m + 1);
            return _mm512_or_si512(low, _mm512_slli_epi16(_mm512_and_si512(high, _mm512_set1_epi8(1)), 4));
        }
    } else {
        static_assert(std::is_same_v<T, Q6_K>);
        const int h = m / 2, c = 2 * (m % 2);  // chunks 4h + c and 4h + c + 1
        const __m512i low = _mm512_and_si512(
            _mm512_srl_epi16(_mm512_loadu_si512(b.ql + 64 * h), _mm_cvtsi32_si128(4 * (c / 2))), mask4);
        const __m512i high = shift_halves(_mm512_broadcast_i64x4(load256(b.qh + 32 * h)), 2 * c, 2 * c + 2);
        return _mm512_or_si512(low, _mm512_slli_epi16(_mm512_and_si512(high, _mm512_set1_epi8(3)), 4));
    }
}

// The f16 scales of two blocks: the first in lanes 0..7, the second in lanes 8..15.
inline __m512 wide_scales(uint16_t d0, uint16_t d1) {
    const __m128 two = _mm_cvtph_ps(_mm_cvtsi32_si128(int(uint32_t(d0) | uint32_t(d1) << 16)));
    return _mm512_permutexvar_ps(_mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0), _mm512_castps128_ps512(two));
}

template <class T, int RM, int RN>
void quantized_tile_wide(const QuantizedRows& x, const uint8_t* w, int64_t ldw, float* y, int64_t ldy,
                         const uint8_t* next) {
    using Block = typename T::Block;
    const int64_t n_chunks = x.k / 32;
    const Block* row[RN];
    __m512 acc[RM][RN];
    float offsets[RM][RN];
#pragma GCC unroll 4
    for (int r = 0; r < RN; ++r) row[r] = reinterpret_cast<const Block*>(w + r * ldw);
#pragma GCC unroll 4
    for (int i = 0; i < RM; ++i)
#pragma GCC unroll 4
        for (int r = 0; r < RN; ++r) {
            acc[i][r] = _mm512_setzero_ps();
            offsets[i][r] = 0.0f;
        }
    __m512i q[RN];
    __m512 scale[RN];

    if constexpr (T::kChunks == 8) {
        for (int64_t b = 0; b < n_chunks / 8; ++b) {
            prefetch_ahead(next, b * RN * int64_t(sizeof(Block)), RN * int64_t(sizeof(Block)));
            BlockScales<8> s[RN];
            __m512 all[RN];  // the block's scales: 8 per chunk, or Q6_K's 16 per half chunk
#pragma GCC unroll 4
            for (int r = 0; r < RN; ++r) {
                if constexpr (T::kHalfScales) {
                    const __m512i sixteen = _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row[r][b].scales)));
                    all[r] = _mm512_mul_ps(_mm512_cvtepi32_ps(sixteen), _mm512_set1_ps(half_to_float(row[r][b].d)));
                } else {
                    T::scales(row[r][b], s[r]);
                    all[r] = _mm512_castps256_ps512(_mm256_loadu_ps(s[r].lo));
                }
            }
#pragma GCC unroll 4
            for (int m = 0; m < 4; ++m) {
                // lanes of chunk 2m then 2m + 1; with half scales, sub-blocks 4m .. 4m + 3 in groups of 4
                const __m512i pick = T::kHalfScales
                    ? _mm512_set_epi32(4 * m + 3, 4 * m + 3, 4 * m + 3, 4 * m + 3, 4 * m + 2, 4 * m + 2, 4 * m + 2,
                                       4 * m + 2, 4 * m + 1, 4 * m + 1, 4 * m + 1, 4 * m + 1, 4 * m, 4 * m, 4 * m, 4 * m)
                    : _mm512_set_epi32(2 * m + 1, 2 * m + 1, 2 * m + 1, 2 * m + 1, 2 * m + 1, 2 * m + 1, 2 * m + 1,
                                       2 * m + 1, 2 * m, 2 * m, 2 * m, 2 * m, 2 * m, 2 * m, 2 * m, 2 * m);
#pragma GCC unroll 4
                for (int r = 0; r < RN; ++r) {
                    q[r] = wide_chunks<T>(row[r][b], m);
                    scale[r] = _mm512_permutexvar_ps(pick, all[r]);
                }
                wide_step<T, RM, RN>(x, 8 * b + 2 * m, q, scale, acc);
            }
            if constexpr (T::kFloatOffset) {  // the 8 mins against the 8 sums, lane by lane
#pragma GCC unroll 4
                for (int i = 0; i < RM; ++i) {
                    const __m256 sums = _mm256_loadu_ps(x.d_sum + i * n_chunks + 8 * b);
#pragma GCC unroll 4
                    for (int r = 0; r < RN; ++r)
                        acc[i][r] = _mm512_add_ps(acc[i][r], _mm512_zextps256_ps512(_mm256_mul_ps(_mm256_loadu_ps(s[r].offset), sums)));
                }
            }
        }
    } else {
        int64_t c = 0;
        for (; c + 2 <= n_chunks; c += 2) {
            prefetch_ahead(next, c * RN * int64_t(sizeof(Block)), 2 * RN * int64_t(sizeof(Block)));
            float offset[RN][2];
#pragma GCC unroll 4
            for (int r = 0; r < RN; ++r) {
                q[r] = wide_blocks<T>(row[r][c], row[r][c + 1]);
                scale[r] = wide_scales(row[r][c].d, row[r][c + 1].d);
                if constexpr (T::kFloatOffset) {
                    offset[r][0] = half_to_float(row[r][c].m);
                    offset[r][1] = half_to_float(row[r][c + 1].m);
                }
            }
            wide_step<T, RM, RN>(x, c, q, scale, acc);
            if constexpr (T::kFloatOffset)
#pragma GCC unroll 4
                for (int i = 0; i < RM; ++i)
#pragma GCC unroll 4
                    for (int r = 0; r < RN; ++r)
                        offsets[i][r] += offset[r][0] * x.d_sum[i * n_chunks + c] + offset[r][1] * x.d_sum[i * n_chunks + c + 1];
        }
        if (c < n_chunks) {  // an odd last block: its weights in the low half, zeros in the high one
#pragma GCC unroll 4
            for (int r = 0; r < RN; ++r) {
                BlockScales<1> s;
                T::scales(row[r][c], s);
                const __m256i lone = T::chunk(row[r][c], 0);
                q[r] = _mm512_zextsi256_si512(T::kSigned ? _mm256_xor_si256(lone, _mm256_set1_epi8(char(0x80))) : lone);
                scale[r] = _mm512_zextps256_ps512(_mm256_set1_ps(s.lo[0]));
                if constexpr (T::kFloatOffset)
#pragma GCC unroll 4
                    for (int i = 0; i < RM; ++i) offsets[i][r] += s.offset[0] * x.d_sum[i * n_chunks + c];
            }
            // wide_step reads two chunks of activations; the second may lie past the row, so the
            // last chunk goes through a copy padded with zeros
            constexpr int kPad = RM;
            alignas(64) int8_t q_pad[kPad][64] = {};
            float d_pad[kPad][2] = {}, sum_pad[kPad][2] = {};
            alignas(16) int32_t half_pad[kPad][8] = {};
            for (int i = 0; i < RM; ++i) {
                __builtin_memcpy(q_pad[i], x.q + i * x.k + 32 * c, 32);
                d_pad[i][0] = x.d[i * n_chunks + c];
                sum_pad[i][0] = x.d_sum[i * n_chunks + c];
                __builtin_memcpy(half_pad[i], x.half_sums + 4 * (i * n_chunks + c), 16);
            }
            // rows of the padded copy are 64 bytes (2 chunks) apart
            const QuantizedRows last{&q_pad[0][0], &d_pad[0][0], &sum_pad[0][0], &half_pad[0][0], 64};
            wide_step<T, RM, RN>(last, 0, q, scale, acc);
        }
    }
    for (int i = 0; i < RM; ++i)
        for (int r = 0; r < RN; ++r) y[i * ldy + r] = _mm512_reduce_add_ps(acc[i][r]) + offsets[i][r];
}
#endif

#include "backends/cpu/quant_panels_x86.h"

template <class T, int RM, int RN>
void quantized_edge_cols(int rn, const QuantizedRows& x, const uint8_t* w, int64_t ldw, float* y, int64_t ldy,
                         const uint8_t* next) {
    if constexpr (RN > 1) {
        if (rn < RN) return quantized_edge_cols<T, RM, RN - 1>(rn, x, w, ldw, y, ldy, next);
    }
#if defined(LLAMADESK_CPU_VNNI)
    quantized_tile_wide<T, RM, RN>(x, w, ldw, y, ldy, next);
#else
    if constexpr (std::is_same_v<T, Q6_K>) q6_k_tile<RM, RN>(x, w, ldw, y, ldy, next);
    else quantized_tile<T, RM, RN>(x, w, ldw, y, ldy, next);
#endif
}

template <class T, int RM>
void quantized_edge(int rm, int rn, const QuantizedRows& x, const uint8_t* w, int64_t ldw, float* y, int64_t ldy,
                    const uint8_t* next) {
    if constexpr (RM > 1) {
        if (rm < RM) return quantized_edge<T, RM - 1>(rm, rn, x, w, ldw, y, ldy, next);
    }
    quantized_edge_cols<T, RM, kQuantTileCols>(rn, x, w, ldw, y, ldy, next);
}

// Decode (n = 1) is the 1 x kQuantTileCols tile: each weight row streams once. A few activation
// rows walk tiles as the float GEMM does (they stay in L1 while the thread's weight rows pass); from
// kPanelMinTokens on, the rows are first interleaved into panels (quant_panels_x86.h).
template <class T>
void quantized_gemm(const QuantizedRows& x, int n, const void* weights, int64_t ldw, int rows, int, float* y,
                    int64_t ldy) {
    const auto* w = static_cast<const uint8_t*>(weights);
    if (n >= kPanelMinTokens)
        return panel_gemm<T>(x, n, w, ldw, rows, y, ldy, [&](int r, int rn, int64_t n_chunks, PanelChunk<T>* panel) {
            pack_panel<T>(w + r * ldw, ldw, rn, n_chunks, panel);
        });
    for (int t = 0; t < n; t += kQuantTileRows) {
        const int rm = n - t < kQuantTileRows ? n - t : kQuantTileRows;
        const QuantizedRows rows_t = x.from(t);
        for (int r = 0; r < rows; r += kQuantTileCols) {
            const int rn = rows - r < kQuantTileCols ? rows - r : kQuantTileCols;
            // Decode reads each weight row once: the tile asks for the rows ahead as it goes (rows
            // of a small model are a few hundred bytes, too short for the hardware prefetcher).
            const uint8_t* next = n <= kQuantTileRows ? w + (r + kPrefetchRows) * ldw : nullptr;
            quantized_edge<T, kQuantTileRows>(rm, rn, rows_t, w + r * ldw, ldw, y + t * ldy + r, ldy, next);
        }
    }
}

inline int hsum_epi32(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
    return _mm_cvtsi128_si32(s);
}

void quantize_rows(const float* x, int64_t ldx, int n, int64_t k, int8_t* q, float* d, float* d_sum,
                   int32_t* half_sums) {
    const __m256 sign = _mm256_set1_ps(-0.0f);
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);  // undoes the per-lane packs
    for (int t = 0; t < n; ++t)
        for (int64_t b = 0; b < k / 32; ++b) {
            const float* src = x + t * ldx + 32 * b;
            __m256 v[4];
            __m256 largest = _mm256_setzero_ps();
            for (int i = 0; i < 4; ++i) {
                v[i] = _mm256_loadu_ps(src + 8 * i);
                largest = _mm256_max_ps(largest, _mm256_andnot_ps(sign, v[i]));
            }
            __m128 m = _mm_max_ps(_mm256_castps256_ps128(largest), _mm256_extractf128_ps(largest, 1));
            m = _mm_max_ps(m, _mm_movehl_ps(m, m));
            const float amax = _mm_cvtss_f32(_mm_max_ss(m, _mm_movehdup_ps(m)));
            const __m256 inv = _mm256_set1_ps(amax > 0.0f ? 127.0f / amax : 0.0f);
            __m256i i32[4];
            for (int i = 0; i < 4; ++i) i32[i] = _mm256_cvtps_epi32(_mm256_mul_ps(v[i], inv));
            const int lo = hsum_epi32(_mm256_add_epi32(i32[0], i32[1])), hi = hsum_epi32(_mm256_add_epi32(i32[2], i32[3]));
            const __m256i packed = _mm256_packs_epi16(_mm256_packs_epi32(i32[0], i32[1]), _mm256_packs_epi32(i32[2], i32[3]));
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + t * k + 32 * b), _mm256_permutevar8x32_epi32(packed, order));
            const float scale = amax / 127.0f;
            const int64_t at = t * (k / 32) + b;
            d[at] = scale;
            d_sum[at] = scale * float(lo + hi);
            _mm_storeu_si128(reinterpret_cast<__m128i*>(half_sums + 4 * at), _mm_set_epi32(0, hi, 0, lo));
        }
}

#include "backends/cpu/quant_superblocks_x86.h"
#include "backends/cpu/quant_interleaved_x86.h"
#include "backends/cpu/quant_blocks_interleaved_x86.h"
#if defined(LLAMADESK_CPU_AMX)
#include "backends/cpu/quant_amx_x86.h"
#include "backends/cpu/quant_blocks_amx_x86.h"
#include "backends/cpu/float_amx_x86.h"
#endif

// peak_probe: the panels' byte dot (dpbusd, or maddubs and madd) on 8 independent accumulators.
uint64_t peak_probe(Kernels::Multiply multiply, int64_t iterations) {
    if (multiply != Kernels::Multiply::Int8) return float_peak_probe(iterations);
    PanelVec::I acc[8];
    for (int i = 0; i < 8; ++i) acc[i] = PanelVec::zero_i();
    PanelVec::I weights;
    __builtin_memset(&weights, 3, sizeof(weights));
    const PanelVec::I step = GroupVec::set1_epi32(1);
    for (int64_t it = 0; it < iterations; ++it) {
#pragma GCC unroll 8
        for (int i = 0; i < 8; ++i) acc[i] = PanelVec::dot(acc[i], weights, 0x01020304);
        weights = GroupVec::add32(weights, step);  // else maddubs and madd of constants leave the loop
    }
    for (int i = 1; i < 8; ++i) acc[0] = GroupVec::add32(acc[0], acc[i]);
    int32_t out;
    __builtin_memcpy(&out, &acc[0], sizeof(out));
    volatile int32_t sink = out;  // keeps the loop
    (void)sink;
    return uint64_t(iterations) * 8 * sizeof(PanelVec::I);
}

// The block types' entries of a kernel set whose plain ones make_kernels filled.
Kernels with_quantized(Kernels k) {
    auto set = [&](DType t, QuantizedGemmFn f) {
        k.types[int(t)].quantized_gemm = f;
        k.types[int(t)].prefill_item_rows = kPanelItemRows;
    };
    set(DType::Q8_0, &quantized_gemm<Q8_0>);
    set(DType::Q4_0, &quantized_gemm<Q4_0>);
    set(DType::Q4_1, &quantized_gemm<Q4_1>);
    set(DType::Q5_0, &quantized_gemm<Q5_0>);
    set(DType::Q5_1, &quantized_gemm<Q5_1>);
    set(DType::Q4_K, &quantized_gemm<Q4_K>);
    set(DType::Q5_K, &quantized_gemm<Q5_K>);
    set(DType::Q6_K, &quantized_gemm<Q6_K>);
    // K-quant rows (in matrices whose rows do not fill whole groups) take decode's super-block tiles
    // up to these many activation rows, the chunk panels beyond. llamadesk-kernel-bench --types
    // q4_k,q5_k,q6_k --rows 14336 --cols 4096 --copies 12, 2 Xeon cores, twice, GMAC/s of the tiles
    // against the panels: avx512vnni Q4_K at 4 rows 49, 48 : 51, 64, Q5_K at 4 38, 44 : 43, 43, Q6_K
    // at 6 58, 60 : 43, 51 and at 8 64, 63 : 64, 66; avx2 Q4_K at 3 32, 33 : 41, 40, Q5_K at 3 24, 27
    // : 36, 36, Q6_K at 4 30, 30 : 30, 30 and at 5 32, 31 : 40, 39.
#if defined(LLAMADESK_CPU_VNNI)
    constexpr int kSuperblockMaxTokens[] = {3, 3, 7};  // Q4_K, Q5_K, Q6_K
#else
    constexpr int kSuperblockMaxTokens[] = {2, 2, 4};
#endif
    k.types[int(DType::Q4_K)].superblock_gemm = &superblock_gemm<Q4_K>;
    k.types[int(DType::Q5_K)].superblock_gemm = &superblock_gemm<Q5_K>;
    k.types[int(DType::Q6_K)].superblock_gemm = &superblock_gemm<Q6_K>;
    k.types[int(DType::Q4_K)].superblock_max_tokens = kSuperblockMaxTokens[0];
    k.types[int(DType::Q5_K)].superblock_max_tokens = kSuperblockMaxTokens[1];
    k.types[int(DType::Q6_K)].superblock_max_tokens = kSuperblockMaxTokens[2];
    k.interleave_rows = kGroupRows;
#if defined(LLAMADESK_CPU_VNNI)
    // super-block activations for any number of rows, on the chunk panels (k_groups_panel_gemm)
    const TypeKernels q4_k_groups = {nullptr, nullptr, nullptr, &k_groups_panel_gemm<Q4_KValues>, INT_MAX, kPanelItemRows, nullptr};
    const TypeKernels q5_k_groups = {nullptr, nullptr, nullptr, &k_groups_panel_gemm<Q5_KValues>, INT_MAX, kPanelItemRows, nullptr};
    const TypeKernels q6_k_groups = {nullptr, nullptr, nullptr, &q6_k_groups_panel_gemm, INT_MAX, kPanelItemRows, nullptr};
#else  // super-block activations for any number of rows (groups_super_panel_gemm)
    const TypeKernels q4_k_groups = {
        nullptr, nullptr, nullptr, &groups_super_panel_gemm<KSuperPanel<Q4_KValues>, q4_k_groups_superblock_gemm>, INT_MAX, 0, nullptr};
    const TypeKernels q5_k_groups = {
        nullptr, nullptr, nullptr, &groups_super_panel_gemm<KSuperPanel<Q5_KValues>, q5_k_groups_superblock_gemm>, INT_MAX, 0, nullptr};
    const TypeKernels q6_k_groups = {
        nullptr, nullptr, nullptr, &groups_super_panel_gemm<Q6_KSuperPanel, &q6_k_groups_superblock_gemm>, INT_MAX, 0, nullptr};
#endif
    k.interleaved[int(DType::Q4_K)] = {q4_k_groups, &interleave_group<&move_q4_k_row<true>>,
                                       &deinterleave_group_row<&move_q4_k_row<false>>};
    k.interleaved[int(DType::Q5_K)] = {q5_k_groups, &interleave_group<&move_q5_k_row<true>>,
                                       &deinterleave_group_row<&move_q5_k_row<false>>};
    k.interleaved[int(DType::Q6_K)] = {q6_k_groups, &interleave_group<&move_q6_k_row<true>>,
                                       &deinterleave_group_row<&move_q6_k_row<false>>};
    k.interleaved[int(DType::Q4_0)] = {{nullptr, &q4_0_groups_quantized_gemm, nullptr, nullptr, 0, kPanelItemRows, nullptr},
                                       &interleave_group<&move_q4_0_row<true>>, &deinterleave_group_row<&move_q4_0_row<false>>};
    k.quantize_rows = &quantize_rows;
    k.quantize_superblocks = &quantize_superblocks;
    k.peak_probe = &peak_probe;
    static_assert(PanelVec::kRows % kQuantTileCols == 0);
    k.block_tile_rows = PanelVec::kRows;
    return k;
}

#if defined(LLAMADESK_CPU_AMX)
// The amx set: Q4_K, Q5_K and Q6_K groups, and Q5_K rows, take super-block activations for any number
// of rows (tiles from kAmxMinTokens on; below, groups take the VNNI set's group tiles or chunk
// panels, Q5_K rows its super-block tiles); Q8_0, and Q4_0 in groups or rows, take tiles from
// kAmxMinTokens rows on, their panels below. A prefill item reads every
// activation row once from L3 or memory, so its rows are many (kPanelItemRows, as on panels). F16
// and BF16 take bf16 tiles where the CPU has AMX-BF16.
Kernels with_amx(Kernels k) {
    k.interleaved[int(DType::Q4_K)].on_groups = {nullptr, nullptr, nullptr, q4_k_groups_amx_gemm, INT_MAX, kPanelItemRows, nullptr};
    k.interleaved[int(DType::Q5_K)].on_groups = {nullptr, nullptr, nullptr, q5_k_groups_amx_gemm, INT_MAX, kPanelItemRows, nullptr};
    k.interleaved[int(DType::Q6_K)].on_groups = {nullptr, nullptr, nullptr, q6_k_groups_amx_gemm, INT_MAX, kPanelItemRows, nullptr};
    k.types[int(DType::Q5_K)] = {nullptr, &quantized_gemm<Q5_K>, nullptr, q5_k_amx_gemm, INT_MAX, kPanelItemRows, nullptr};
    k.types[int(DType::Q8_0)].quantized_gemm = &blocks_amx_gemm<Q8_0Amx, &quantized_gemm<Q8_0>>;
    k.types[int(DType::Q4_0)].quantized_gemm = &blocks_amx_gemm<Q4_0Amx, &quantized_gemm<Q4_0>>;
    k.interleaved[int(DType::Q4_0)].on_groups.quantized_gemm = &blocks_amx_gemm<Q4_0GroupAmx, &q4_0_groups_quantized_gemm>;
    if (cpu_features().amx_bf16) {  // F16 and BF16: bf16 tiles
        k.types[int(DType::F16)].bf16_tile_gemm = &bf16_tile_gemm<WeightKind::F16>;
        k.types[int(DType::BF16)].bf16_tile_gemm = &bf16_tile_gemm<WeightKind::BF16>;
        for (DType t : {DType::F16, DType::BF16}) k.types[int(t)].prefill_item_rows = kBf16ItemRows;
        k.pack_bf16_tiles = &pack_bf16_tiles;
    }
    k.peak_probe = [](Kernels::Multiply multiply, int64_t iterations) {
        if (multiply == Kernels::Multiply::Int8) return amx_peak_probe(iterations);
        if (multiply == Kernels::Multiply::Bf16 && cpu_features().amx_bf16) return amx_bf16_peak_probe(iterations);
        return peak_probe(multiply, iterations);
    };
    return k;
}
#endif
