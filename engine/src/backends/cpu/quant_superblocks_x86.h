// Decode products of the K-quant types (Q4_K, Q5_K, Q6_K) in integers, against activations
// quantized per super-block of 256 (SuperblockRows, llama.cpp's q8_K). quant_kernels_x86.h includes
// it after the type descriptions, in every x86 kernel set.
//
// The tiles of quant_kernels_x86.h read activations quantized per 32, so every chunk of 32 pays a
// float step (convert, scale, accumulate) per pair of rows. With one activation scale per
// super-block, the sub-block scales are small integers (6 bits; Q6_K's signed 8) that go into the
// integer dot instead: maddubs makes 16-bit pair sums of weight and activation bytes, and a
// 16-bit multiply-add against the sub-block scales accumulates them in 32 bits (dpwssd with VNNI,
// madd + add without). A super-block then costs one float step: d * d_x times the integer sum, and
// for Q4_K and Q5_K the mins against the activation's sums per 16, one more.
//
// A super-block is read in steps of two vectors of weight bytes, `lo` and `hi`: the low and high
// nibbles of one run of packed bytes, so each load is unpacked with one and, one shift and one
// more and. Each type says which activation bytes and which sub-block scales line up with them.

#if defined(LLAMADESK_CPU_VNNI)
struct SuperVec {
    using I = __m512i;
    static constexpr int kBytes = 64;
    static constexpr int kSteps = 2;  // 128 elements per step
    static I load(const void* p) { return _mm512_loadu_si512(p); }
    static I and_(I a, I b) { return _mm512_and_si512(a, b); }
    static I or_(I a, I b) { return _mm512_or_si512(a, b); }
    static I set1_epi8(char v) { return _mm512_set1_epi8(v); }
    static I srli4(I v) { return _mm512_srli_epi16(v, 4); }
    static I slli4(I v) { return _mm512_slli_epi16(v, 4); }
    static I zero() { return _mm512_setzero_si512(); }
    // acc + in each 32-bit lane: the sums of two byte products u * s, each pair times its 16-bit scale
    static I dot(I acc, I u, I s, I scales) { return _mm512_dpwssd_epi32(acc, _mm512_maddubs_epi16(u, s), scales); }
    // 32 bytes at lo, then 32 bytes at hi
    static I load_halves(const int8_t* lo, const int8_t* hi) {
        return _mm512_inserti64x4(_mm512_castsi256_si512(load256(lo)), load256(hi), 1);
    }
    // 16-bit lanes of the low 256 bits shifted right by lo, of the high 256 bits by hi
    static I shift_halves(I v, int lo, int hi) {
        return _mm512_srlv_epi16(v, _mm512_inserti64x4(_mm512_set1_epi16(short(lo)), _mm256_set1_epi16(short(hi)), 1));
    }
    static I broadcast256(const void* p) { return _mm512_broadcast_i64x4(load256(p)); }
    // 16-bit lanes: lane l takes scales[pick(l)] (scales: 16 int16 in a 256-bit vector)
    template <class Pick>
    static I spread(__m256i scales, Pick) {
        static constexpr std::array<int16_t, 32> index = [] {
            std::array<int16_t, 32> lanes{};
            for (int l = 0; l < 32; ++l) lanes[size_t(l)] = int16_t(Pick{}(l));
            return lanes;
        }();
        return _mm512_permutexvar_epi16(_mm512_loadu_si512(index.data()), _mm512_castsi256_si512(scales));
    }
    static __m512 to_float(I v) { return _mm512_cvtepi32_ps(v); }
    static __m512 fma(__m512 a, float b, __m512 c) { return _mm512_fmadd_ps(a, _mm512_set1_ps(b), c); }
    static __m512 fma_low(__m256 a, float b, __m512 c) { return _mm512_fmadd_ps(_mm512_zextps256_ps512(a), _mm512_set1_ps(b), c); }
    static I sub_low(I a, __m256i b) { return _mm512_sub_epi32(a, _mm512_zextsi256_si512(b)); }
    static __m512 fzero() { return _mm512_setzero_ps(); }
    static float hsum(__m512 v) { return _mm512_reduce_add_ps(v); }
};
// activation rows x weight rows: decode of an 8B Q4_K_M file moved to memory, 2 Xeon cores: 3.9-4.0
// tok/s with 2 weight rows, 3.7 with 4, 3.3-3.4 with 1, 2.4-2.5 with 8
constexpr int kSuperTileRows = 2;
constexpr int kSuperTileCols = 2;
#else
struct SuperVec {
    using I = __m256i;
    static constexpr int kBytes = 32;
    static constexpr int kSteps = 4;  // 64 elements per step
    static I load(const void* p) { return load256(p); }
    static I and_(I a, I b) { return _mm256_and_si256(a, b); }
    static I or_(I a, I b) { return _mm256_or_si256(a, b); }
    static I set1_epi8(char v) { return _mm256_set1_epi8(v); }
    static I srli4(I v) { return _mm256_srli_epi16(v, 4); }
    static I slli4(I v) { return _mm256_slli_epi16(v, 4); }
    static I zero() { return _mm256_setzero_si256(); }
    static I dot(I acc, I u, I s, I scales) {
        return in_order(_mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), scales)));
    }
    // 16-bit lanes 0..7 take scales[pick(0)], lanes 8..15 scales[pick(8)], two words of one dword
    // (there is no 16-bit permute here): that dword everywhere, then a byte shuffle per 128 bits
    template <class Pick>
    static I spread(__m256i scales, Pick) {
        constexpr int lo = Pick{}(0), hi = Pick{}(8);
        static_assert(lo / 2 == hi / 2);
        const __m256i pair = _mm256_permutevar8x32_epi32(scales, _mm256_set1_epi32(lo / 2));
        const short word_lo = short(0x0100 + 0x0202 * (lo % 2)), word_hi = short(0x0100 + 0x0202 * (hi % 2));
        return _mm256_shuffle_epi8(pair, _mm256_setr_m128i(_mm_set1_epi16(word_lo), _mm_set1_epi16(word_hi)));
    }
    static __m256 to_float(I v) { return _mm256_cvtepi32_ps(v); }
    static __m256 fma(__m256 a, float b, __m256 c) { return _mm256_fmadd_ps(a, _mm256_set1_ps(b), c); }
    static __m256 fma_low(__m256 a, float b, __m256 c) { return fma(a, b, c); }
    static I sub_low(I a, __m256i b) { return _mm256_sub_epi32(a, b); }
    static __m256 fzero() { return _mm256_setzero_ps(); }
    static float hsum(__m256 v) { return hsum256(v); }
};
constexpr int kSuperTileRows = 1;  // 16 registers: 2 integer and 2 float accumulators, and the step's vectors
constexpr int kSuperTileCols = 2;
#endif
using SuperF = decltype(SuperVec::to_float(SuperVec::zero()));

// One step's weights and the scales that line up with their 16-bit pair sums.
struct SuperStep {
    SuperVec::I lo, hi, scale_lo, scale_hi;
};

// Q4_K and Q5_K: 8 sub-blocks of 32 with 6-bit scales and mins. Run m of qs (32 bytes) holds
// chunk 2m in its low nibbles and 2m + 1 in its high ones.
template <class T>
struct KMinsSuper {
    using Block = typename T::Block;
    static constexpr bool kMins = true;
    // the 8 scales and 8 mins as 16-bit integers: scales in lanes 0..7, mins in 8..15
    static __m256i scales(const Block& b) {
        uint32_t w[3];
        __builtin_memcpy(w, b.scales, 12);
        const uint32_t scale_lo = w[0] & 0x3f3f3f3f, min_lo = w[1] & 0x3f3f3f3f;
        const uint32_t scale_hi = (w[2] & 0x0f0f0f0f) | ((w[0] >> 6) & 0x03030303) << 4;
        const uint32_t min_hi = ((w[2] >> 4) & 0x0f0f0f0f) | ((w[1] >> 6) & 0x03030303) << 4;
        return _mm256_cvtepu8_epi16(_mm_set_epi32(int(min_hi), int(min_lo), int(scale_hi), int(scale_lo)));
    }
    // Step s: with 512 bits, runs 2s and 2s + 1 (chunks 4s, 4s + 2 low; 4s + 1, 4s + 3 high); with
    // 256 bits, run s (chunk 2s low, 2s + 1 high). chunk(s, half) is the chunk in that 256-bit half
    // of the step's low vector.
    static constexpr int chunk(int s, int half) { return SuperVec::kSteps == 2 ? 4 * s + 2 * half : 2 * s; }
    template <int s>
    static SuperStep step(const Block& b, const __m256i& scales) {
        const SuperVec::I mask = SuperVec::set1_epi8(15);
        const SuperVec::I v = SuperVec::load(b.qs + SuperVec::kBytes * s);
        SuperStep st{SuperVec::and_(v, mask), SuperVec::and_(SuperVec::srli4(v), mask), {}, {}};
        constexpr int kLanesPerChunk = 16;  // 32 bytes make 16 pair sums
        st.scale_lo = SuperVec::spread(scales, [](int l) { return chunk(s, l / kLanesPerChunk); });
        st.scale_hi = SuperVec::spread(scales, [](int l) { return chunk(s, l / kLanesPerChunk) + 1; });
        if constexpr (std::is_same_v<T, Q5_K>) {  // bit j of qh[l]: the fifth bit of element 32j + l
#if defined(LLAMADESK_CPU_VNNI)
            const SuperVec::I h = SuperVec::broadcast256(b.qh), one = SuperVec::set1_epi8(1);
            st.lo = SuperVec::or_(st.lo, SuperVec::slli4(SuperVec::and_(SuperVec::shift_halves(h, chunk(s, 0), chunk(s, 1)), one)));
            st.hi = SuperVec::or_(st.hi, SuperVec::slli4(SuperVec::and_(SuperVec::shift_halves(h, chunk(s, 0) + 1, chunk(s, 1) + 1), one)));
#else
            const SuperVec::I h = SuperVec::load(b.qh);
            st.lo = SuperVec::or_(st.lo, SuperVec::slli4(byte_bits(h, chunk(s, 0), 1)));
            st.hi = SuperVec::or_(st.hi, SuperVec::slli4(byte_bits(h, chunk(s, 0) + 1, 1)));
#endif
        }
        return st;
    }
    // The activation bytes of the step's low and high vectors (a: the super-block's 256).
    template <int s>
    static void activations(const int8_t* a, SuperVec::I& lo, SuperVec::I& hi) {
#if defined(LLAMADESK_CPU_VNNI)
        lo = SuperVec::load_halves(a + 32 * chunk(s, 0), a + 32 * chunk(s, 1));
        hi = SuperVec::load_halves(a + 32 * chunk(s, 0) + 32, a + 32 * chunk(s, 1) + 32);
#else
        lo = SuperVec::load(a + 32 * chunk(s, 0));
        hi = SuperVec::load(a + 32 * chunk(s, 0) + 32);
#endif
    }
    static float d(const Block& b) { return half_to_float(b.d); }
    static float dmin(const Block& b) { return half_to_float(b.dmin); }
};

// Q6_K: 16 sub-blocks of 16 with signed 8-bit scales, q - 32. Half h of ql (64 bytes) holds
// chunks 4h, 4h + 1 in its low nibbles and 4h + 2, 4h + 3 in its high ones; bits 2c, 2c + 1 of
// qh[32h + l] are the high bits of element l of chunk 4h + c.
struct Q6Super {
    using Block = quant::BlockQ6_K;
    static constexpr bool kMins = false;
    static __m256i scales(const Block& b) {
        return _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b.scales)));
    }
    // Step s: with 512 bits, half s whole; with 256 bits, of half h = s / 2 the chunks 4h + e (low)
    // and 4h + 2 + e (high) for e = s % 2. first(s) is the low vector's first element.
    static constexpr int first(int s) { return SuperVec::kSteps == 2 ? 128 * s : 128 * (s / 2) + 32 * (s % 2); }
    template <int s>
    static SuperStep step(const Block& b, const __m256i& scales) {
        const SuperVec::I mask = SuperVec::set1_epi8(15);
        constexpr int h = first(s) / 128, c = first(s) % 128 / 32;  // chunk 4h + c starts the low vector
        const SuperVec::I v = SuperVec::load(b.ql + 64 * h + 32 * c);
        SuperStep st{SuperVec::and_(v, mask), SuperVec::and_(SuperVec::srli4(v), mask), {}, {}};
#if defined(LLAMADESK_CPU_VNNI)
        const SuperVec::I bits = SuperVec::broadcast256(b.qh + 32 * h), three = SuperVec::set1_epi8(3);
        st.lo = SuperVec::or_(st.lo, SuperVec::slli4(SuperVec::and_(SuperVec::shift_halves(bits, 0, 2), three)));
        st.hi = SuperVec::or_(st.hi, SuperVec::slli4(SuperVec::and_(SuperVec::shift_halves(bits, 4, 6), three)));
#else
        const SuperVec::I bits = SuperVec::load(b.qh + 32 * h);
        st.lo = SuperVec::or_(st.lo, SuperVec::slli4(byte_bits(bits, 2 * c, 3)));
        st.hi = SuperVec::or_(st.hi, SuperVec::slli4(byte_bits(bits, 2 * c + 4, 3)));
#endif
        constexpr int kLanesPerSub = 8;  // 16 bytes make 8 pair sums
        st.scale_lo = SuperVec::spread(scales, [](int l) { return (first(s) + 16 * (l / kLanesPerSub)) / 16; });
        st.scale_hi = SuperVec::spread(scales, [](int l) { return (first(s) + 64 + 16 * (l / kLanesPerSub)) / 16; });
        return st;
    }
    template <int s>
    static void activations(const int8_t* a, SuperVec::I& lo, SuperVec::I& hi) {
        lo = SuperVec::load(a + first(s));
        hi = SuperVec::load(a + first(s) + 64);
    }
    static float d(const Block& b) { return half_to_float(b.d); }
};

template <class T> struct SuperOf;
template <> struct SuperOf<Q4_K> { using type = KMinsSuper<Q4_K>; };
template <> struct SuperOf<Q5_K> { using type = KMinsSuper<Q5_K>; };
template <> struct SuperOf<Q6_K> { using type = Q6Super; };

// sum[i][r] += step s of super-block b: activation row i against weight row r.
template <class S, int s, int RM, int RN>
inline void superblock_step(const SuperblockRows& x, int64_t b, const typename S::Block* const (&block)[RN],
                            const __m256i (&scales)[RN], SuperVec::I (&sum)[RM][RN]) {
    SuperStep st[RN];
#pragma GCC unroll 4
    for (int r = 0; r < RN; ++r) st[r] = S::template step<s>(*block[r], scales[r]);
#pragma GCC unroll 4
    for (int i = 0; i < RM; ++i) {
        SuperVec::I lo, hi;
        S::template activations<s>(x.q + i * x.k + kSuperBlock * b, lo, hi);
#pragma GCC unroll 4
        for (int r = 0; r < RN; ++r)
            sum[i][r] = SuperVec::dot(SuperVec::dot(sum[i][r], st[r].lo, lo, st[r].scale_lo), st[r].hi, hi, st[r].scale_hi);
    }
}

// y (RM, RN) = x (RM activation rows) . w (RN rows, ldw bytes apart)^T, one super-block at a time.
template <class S, int RM, int RN>
void superblock_tile(const SuperblockRows& x, const uint8_t* w, int64_t ldw, float* y, int64_t ldy, const uint8_t* next) {
    using Block = typename S::Block;
    const int64_t n_blocks = x.k / kSuperBlock;
    SuperF acc[RM][RN];
#pragma GCC unroll 4
    for (int i = 0; i < RM; ++i)
#pragma GCC unroll 4
        for (int r = 0; r < RN; ++r) acc[i][r] = SuperVec::fzero();
    for (int64_t b = 0; b < n_blocks; ++b) {
        const Block* block[RN];
        __m256i scales[RN];
#pragma GCC unroll 4
        for (int r = 0; r < RN; ++r) {
            block[r] = reinterpret_cast<const Block*>(w + r * ldw) + b;
            scales[r] = S::scales(*block[r]);
        }
        prefetch_ahead(next, b * RN * int64_t(sizeof(Block)), RN * int64_t(sizeof(Block)));
        SuperVec::I sum[RM][RN];
#pragma GCC unroll 4
        for (int i = 0; i < RM; ++i)
#pragma GCC unroll 4
            for (int r = 0; r < RN; ++r) sum[i][r] = SuperVec::zero();
        [&]<int... s>(std::integer_sequence<int, s...>) {
            (superblock_step<S, s, RM, RN>(x, b, block, scales, sum), ...);
        }(std::make_integer_sequence<int, SuperVec::kSteps>());
#pragma GCC unroll 4
        for (int i = 0; i < RM; ++i) {
            const int64_t at = i * n_blocks + b;
            const __m256i sums = load256(x.sums + 16 * at);  // the activation's 16 sums of 16
#pragma GCC unroll 4
            for (int r = 0; r < RN; ++r) {
                if constexpr (S::kMins) {
                    // mins[j] against the sums of sub-block j's two halves: each min in two lanes
                    const __m256i mins = _mm256_permute4x64_epi64(scales[r], 0xFA);  // mins 0..3 low, 4..7 high
                    const __m256i twice = _mm256_unpacklo_epi16(mins, mins);
                    const __m256 m = _mm256_cvtepi32_ps(_mm256_madd_epi16(twice, sums));
                    acc[i][r] = SuperVec::fma_low(m, -S::dmin(*block[r]) * x.d[at], acc[i][r]);
                } else {  // Q6_K's -32, sub-block by sub-block: 32 * scale * sum, in integers
                    sum[i][r] = SuperVec::sub_low(sum[i][r], _mm256_slli_epi32(_mm256_madd_epi16(scales[r], sums), 5));
                }
                acc[i][r] = SuperVec::fma(SuperVec::to_float(sum[i][r]), S::d(*block[r]) * x.d[at], acc[i][r]);
            }
        }
    }
    for (int i = 0; i < RM; ++i)
        for (int r = 0; r < RN; ++r) y[i * ldy + r] = SuperVec::hsum(acc[i][r]);
}

template <class S, int RM, int RN>
void superblock_edge_cols(int rn, const SuperblockRows& x, const uint8_t* w, int64_t ldw, float* y, int64_t ldy,
                          const uint8_t* next) {
    if constexpr (RN > 1) {
        if (rn < RN) return superblock_edge_cols<S, RM, RN - 1>(rn, x, w, ldw, y, ldy, next);
    }
    superblock_tile<S, RM, RN>(x, w, ldw, y, ldy, next);
}

template <class S, int RM>
void superblock_edge(int rm, int rn, const SuperblockRows& x, const uint8_t* w, int64_t ldw, float* y, int64_t ldy,
                     const uint8_t* next) {
    if constexpr (RM > 1) {
        if (rm < RM) return superblock_edge<S, RM - 1>(rm, rn, x, w, ldw, y, ldy, next);
    }
    superblock_edge_cols<S, RM, kSuperTileCols>(rn, x, w, ldw, y, ldy, next);
}

// Tiles of activation rows outside, weight rows inside, as quantized_gemm; decode tiles ask for
// the rows ahead as they go (prefetch_ahead).
template <class T>
void superblock_gemm(const SuperblockRows& x, int n, const void* weights, int64_t ldw, int rows, float* y,
                     int64_t ldy) {
    using S = typename SuperOf<T>::type;
    const auto* w = static_cast<const uint8_t*>(weights);
    for (int t = 0; t < n; t += kSuperTileRows) {
        const int rm = n - t < kSuperTileRows ? n - t : kSuperTileRows;
        const SuperblockRows rows_t = x.from(t);
        for (int r = 0; r < rows; r += kSuperTileCols) {
            const int rn = rows - r < kSuperTileCols ? rows - r : kSuperTileCols;
            const uint8_t* next = n <= kSuperTileRows ? w + (r + kPrefetchRows) * ldw : nullptr;
            superblock_edge<S, kSuperTileRows>(rm, rn, rows_t, w + r * ldw, ldw, y + t * ldy + r, ldy, next);
        }
    }
}

// Rows x (n, k), ldx apart, per super-block: q = round(x / d), d = max |x| / 127, and the sums of q
// per 16 and per 32.
void quantize_superblocks(const float* x, int64_t ldx, int n, int64_t k, int8_t* q, float* d, int16_t* sums,
                          int16_t* sums32) {
    const __m256 sign = _mm256_set1_ps(-0.0f);
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);  // undoes the per-lane packs
    for (int t = 0; t < n; ++t)
        for (int64_t b = 0; b < k / kSuperBlock; ++b) {
            const float* src = x + t * ldx + kSuperBlock * b;
            __m256 largest = _mm256_setzero_ps();
            for (int i = 0; i < kSuperBlock / 8; ++i)
                largest = _mm256_max_ps(largest, _mm256_andnot_ps(sign, _mm256_loadu_ps(src + 8 * i)));
            __m128 m = _mm_max_ps(_mm256_castps256_ps128(largest), _mm256_extractf128_ps(largest, 1));
            m = _mm_max_ps(m, _mm_movehl_ps(m, m));
            const float amax = _mm_cvtss_f32(_mm_max_ss(m, _mm_movehdup_ps(m)));
            const __m256 inv = _mm256_set1_ps(amax > 0.0f ? 127.0f / amax : 0.0f);
            const int64_t at = t * (k / kSuperBlock) + b;
            d[at] = amax / 127.0f;
            for (int c = 0; c < kSuperBlock / 32; ++c) {
                __m256i i32[4];
                for (int i = 0; i < 4; ++i) i32[i] = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(src + 32 * c + 8 * i), inv));
                const int16_t lo = int16_t(hsum_epi32(_mm256_add_epi32(i32[0], i32[1])));
                const int16_t hi = int16_t(hsum_epi32(_mm256_add_epi32(i32[2], i32[3])));
                const __m256i packed = _mm256_packs_epi16(_mm256_packs_epi32(i32[0], i32[1]), _mm256_packs_epi32(i32[2], i32[3]));
                _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + t * k + kSuperBlock * b + 32 * c),
                                    _mm256_permutevar8x32_epi32(packed, order));
                sums[16 * at + 2 * c] = lo;
                sums[16 * at + 2 * c + 1] = hi;
                sums32[8 * at + c] = int16_t(lo + hi);
            }
        }
}
