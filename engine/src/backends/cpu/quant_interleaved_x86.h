// Q4_K, Q5_K and Q6_K weights regrouped at load so that lane r of every vector belongs to row r of a
// group of PanelVec::kRows rows (16 with AVX-512 VNNI, 8 otherwise), as llama.cpp's repack does
// (q4_K_8x8). quant_kernels_x86.h includes it after the panels and the super-block tiles, in every
// x86 set; the CPU backend makes the groups (CpuBackend::interleave_weights).
//
// The super-block tiles give all lanes of a vector to one weight row: its sub-block scales must be
// spread over the lanes (a permute per vector), and each row ends in a horizontal sum. Here one
// vector load holds 4 packed bytes of each row of the group at the same columns, so a broadcast
// activation dword is multiplied into every row at once (dpbusd), each row's scale is a byte of
// its own lane (one shuffle per sub-block for all rows), the float step and the mins are shared by
// the group, and the lanes are the outputs. llamadesk-kernel-bench, 2 Xeon cores, 14336 x 4096,
// one token, groups against rows: Q4_K 87 against 48 GMAC/s from the caches, 22.6 against 12.2
// GB/s from memory (--copies 30); Q6_K 56 against 48, and 17.9 against 15.8 GB/s; Q5_K (the same
// command, amx set) 20.2 against 13.5 GB/s from memory. Prefill packs its panels from the groups
// with a shift and an and per vector.
//
// A group's super-block b, 144 * kRows bytes, the same as its rows' blocks:
//   d[r], dmin[r]        row r's two halves
//   scales[w][r]         dword w (of 3) of row r's 12 packed scale bytes
//   qs[m][g][r][i]       byte 4g + i of row r's run m (32 bytes: chunk 2m in the low nibbles,
//                        chunk 2m + 1 in the high ones)

constexpr int kGroupRows = PanelVec::kRows;

// From how many activation rows a product on groups takes panels (quant_panels_x86.h with VNNI, the
// super-block panels below without); fewer take decode's group tiles, which pass over a group once
// per kGroupTileRows activation rows (Q6_K: kQ6GroupTileRows) but pay for no packing. Where the two
// cross: llamadesk-kernel-bench --rows 14336 --cols 4096 --copies 12 (weights from memory, as in a
// batched decode), 2 Xeon cores, two runs, GMAC/s of the group tiles against the panels at n rows:
//   avx512vnni  Q4_0 n=10 208, 195 : 210, 175; n=14 227, 198 : 238, 251
//               Q4_K n=12 241, 247 : 235, 232; n=14 228, 239 : 249, 248
//               Q5_K n=8 171, 173 : 149, 135;  n=10 145, 171 : 180, 163
//               Q6_K n=6 71, 96 : 101, 83;     n=8 87, 103 : 119, 103
// and without VNNI, --copies 4 to 8, 2 Zen 3 cores (avx2), two or three runs, with the tiles of 4
// rows (Q6_K: 2, centred):
//   avx2        Q4_0 n=12 168, 165 : 159, 156; n=16 150, 159 : 167, 165
//               Q4_K n=16 183, 188 : 176, 167; n=24 189, 192 : 193, 185
//               Q5_K n=10 99, 126 : 84, 87;    n=12 134, 110 : 137, 135
//               Q6_K n=8 86, 76, 73 : 96, 74, 73; n=12 84, 75, 78 : 109, 85, 84
// A single panel's 8 rows had been the line everywhere: the 8B Q4_K_M model decoded 8 conversations at
// once no faster than 4 (llamadesk-bench --batch 4,8: 18.8 and 19.1 tok/s).
struct GroupPanelFrom {
    int q4_0, q4_k, q5_k, q6_k;
};
#if defined(LLAMADESK_CPU_VNNI)
constexpr GroupPanelFrom kGroupPanelFrom = {12, 14, 10, 8};
#else
constexpr GroupPanelFrom kGroupPanelFrom = {14, 20, 12, 8};
#endif

// A thread's groups are one run of bytes: each super-block asks, into L2, for the bytes this far
// ahead, a part per pass over the super-block (prefetch_part), as the decode tiles do. 2 Xeon
// cores, 30 copies of 14336 x 4096 (far larger than the caches), llamadesk-kernel-bench --isa amx
// --tokens 1, before (the prefetches compiled away, prefetch.h) and after: Q6_K 20.6 -> 24.5-25.0
// GB/s, Q5_K 22.4-23.2 -> 23.9-25.3, Q4_K 24.0-24.4 -> 24.7-26.1.
constexpr int64_t kGroupPrefetchBytes = 16384;

struct Q4_KGroup {
    uint16_t d[kGroupRows], dmin[kGroupRows];
    uint32_t scales[3][kGroupRows];
    uint8_t qs[4][8][kGroupRows][4];
};
static_assert(sizeof(Q4_KGroup) == kGroupRows * sizeof(quant::BlockQ4_K));

// Q5_K in groups: Q4_K's fields, and each row's fifth bits. A group's super-block b, 176 *
// kGroupRows bytes:
//   g                    as Q4_KGroup
//   qh[c][r][i]          byte 4c + i of row r's qh: bit j is the fifth bit of element 32j + 4c + i
struct Q5_KGroup {
    Q4_KGroup g;
    uint8_t qh[8][kGroupRows][4];
};
static_assert(sizeof(Q5_KGroup) == kGroupRows * sizeof(quant::BlockQ5_K));

// n bytes between a plain row's at `plain` and a group's at `grouped`: into the group (ToGroup), or
// back. One function per layout says where each row's bytes lie in its group, for both directions.
template <bool ToGroup>
inline void move_bytes(const void* plain, const void* grouped, size_t n) {
    if constexpr (ToGroup) __builtin_memcpy(const_cast<void*>(grouped), plain, n);
    else __builtin_memcpy(const_cast<void*>(plain), grouped, n);
}

// Row r's block (BlockQ4_K or BlockQ5_K) and a group's Q4_K fields.
template <bool ToGroup, class Block>
void move_q4_k_fields(const Block& block, int r, const Q4_KGroup& g) {
    move_bytes<ToGroup>(&block.d, &g.d[r], 2);
    move_bytes<ToGroup>(&block.dmin, &g.dmin[r], 2);
    for (int word = 0; word < 3; ++word) move_bytes<ToGroup>(block.scales + 4 * word, &g.scales[word][r], 4);
    for (int m = 0; m < 4; ++m)
        for (int i = 0; i < 8; ++i) move_bytes<ToGroup>(block.qs + 32 * m + 4 * i, g.qs[m][i][r], 4);
}

// Row r of a group (k columns) and the plain row at row.
template <bool ToGroup>
void move_q4_k_row(const void* row, int r, int64_t k, const void* group) {
    for (int64_t b = 0; b < k / kSuperBlock; ++b)
        move_q4_k_fields<ToGroup>(static_cast<const quant::BlockQ4_K*>(row)[b], r, static_cast<const Q4_KGroup*>(group)[b]);
}

template <bool ToGroup>
void move_q5_k_row(const void* row, int r, int64_t k, const void* group) {
    for (int64_t b = 0; b < k / kSuperBlock; ++b) {
        const auto& block = static_cast<const quant::BlockQ5_K*>(row)[b];
        const Q5_KGroup& g = static_cast<const Q5_KGroup*>(group)[b];
        move_q4_k_fields<ToGroup>(block, r, g.g);
        for (int c = 0; c < 8; ++c) move_bytes<ToGroup>(block.qh + 4 * c, g.qh[c][r], 4);
    }
}

// InterleavedKernels::interleave and deinterleave_row of a layout's move_*_row.
template <void (*MoveToGroup)(const void*, int, int64_t, const void*)>
void interleave_group(const void* w, int64_t ldw, int64_t k, void* out) {
    for (int r = 0; r < kGroupRows; ++r) MoveToGroup(static_cast<const uint8_t*>(w) + r * ldw, r, k, out);
}
template <void (*MoveFromGroup)(const void*, int, int64_t, const void*)>
void deinterleave_group_row(const void* group, int r, int64_t k, void* row) {
    MoveFromGroup(row, r, k, group);
}

#if defined(LLAMADESK_CPU_VNNI)
struct GroupVec : PanelVec {
    static I load(const void* p) { return _mm512_loadu_si512(p); }
    static I and_(I a, I b) { return _mm512_and_si512(a, b); }
    static I or_(I a, I b) { return _mm512_or_si512(a, b); }
    static I or_and(I a, I b, I mask) { return _mm512_ternarylogic_epi32(a, b, mask, 0xf8); }  // a | (b & mask)
    static I srli32(I v, int n) { return _mm512_srli_epi32(v, unsigned(n)); }
    static I slli32(I v, int n) { return _mm512_slli_epi32(v, unsigned(n)); }
    static I srai32(I v, int n) { return _mm512_srai_epi32(v, unsigned(n)); }
    static I srai16(I v, int n) { return _mm512_srai_epi16(v, unsigned(n)); }
    static I set1_epi32(int32_t v) { return _mm512_set1_epi32(v); }
    static I shuffle(I v, I control) { return _mm512_shuffle_epi8(v, control); }
    static I mul32(I a, I b) { return _mm512_mullo_epi32(a, b); }
    static I add32(I a, I b) { return _mm512_add_epi32(a, b); }
    // acc + the two 16-bit products of each 32-bit lane of a and b
    static I dot16(I acc, I a, I b) { return _mm512_dpwssd_epi32(acc, a, b); }
    static F halves(const uint16_t* p) { return _mm512_cvtph_ps(load256(p)); }
    static F fnma(F a, F b, F c) { return _mm512_fnmadd_ps(a, b, c); }
    static void store_all(float* p, F v) { _mm512_storeu_ps(p, v); }
};
constexpr int kGroupTileRows = 4;  // activation rows per pass: 4 x (2 sub-block, 1 super-block sums, 1 float)
constexpr int kQ6GroupTileRows = 2;  // 2 x (4 sub-block, 1 super-block, 1 offset sums, 1 float)
#else
struct GroupVec : PanelVec {
    static I load(const void* p) { return load256(p); }
    static I and_(I a, I b) { return _mm256_and_si256(a, b); }
    static I or_(I a, I b) { return _mm256_or_si256(a, b); }
    static I or_and(I a, I b, I mask) { return _mm256_or_si256(a, _mm256_and_si256(b, mask)); }
    static I srli32(I v, int n) { return _mm256_srli_epi32(v, n); }
    static I slli32(I v, int n) { return _mm256_slli_epi32(v, n); }
    static I srai32(I v, int n) { return _mm256_srai_epi32(v, n); }
    static I srai16(I v, int n) { return _mm256_srai_epi16(v, n); }
    static I set1_epi32(int32_t v) { return _mm256_set1_epi32(v); }
    static I shuffle(I v, I control) { return _mm256_shuffle_epi8(v, control); }
    static I mul32(I a, I b) { return _mm256_mullo_epi32(a, b); }
    static I add32(I a, I b) { return _mm256_add_epi32(a, b); }
    static I dot16(I acc, I a, I b) { return in_order(_mm256_add_epi32(acc, _mm256_madd_epi16(a, b))); }
    static F halves(const uint16_t* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
    static F fnma(F a, F b, F c) { return _mm256_fnmadd_ps(a, b, c); }
    static void store_all(float* p, F v) { _mm256_storeu_ps(p, v); }
};
// As with VNNI, 4 rows a pass (Q6_K 2): the 16 registers then spill the super-block sums and float
// accumulators, which a pass touches once per run and super-block, but a group's values are unpacked
// once per 4 activation rows, not per row. llamadesk-kernel-bench --isa avx2 --rows 14336 --cols 4096
// --tokens 2,3,4 --copies 8, 2 Zen 3 cores, 1 row a pass against 4 (Q6_K: 2), three runs, GMAC/s:
// Q4_K n=4 100, 74, 86 -> 150, 116, 145; n=3 92, 71, 79 -> 115, 118, 137; Q6_K n=4 39, 49 -> 51, 52.
constexpr int kGroupTileRows = 4;
constexpr int kQ6GroupTileRows = 2;
#endif

// A byte shuffle that makes byte i of each 32-bit lane that lane's byte b<i> (-1: zero), to widen
// per-row bytes into the 16- or 32-bit integers the dots multiply.
template <int b0, int b1, int b2, int b3>
GroupVec::I lane_bytes() {
    static constexpr auto control = [] {
        std::array<uint8_t, 64> c{};
        for (int at = 0; at < 64; at += 4) {
            const int base = at % 16;  // shuffles index within 128 bits
            const int pick[4] = {b0, b1, b2, b3};
            for (int i = 0; i < 4; ++i) c[size_t(at + i)] = pick[i] < 0 ? 0x80 : uint8_t(base + pick[i]);
        }
        return c;
    }();
    return GroupVec::load(control.data());
}

// Each row's byte j of scales (a scale per lane) in both 16-bit halves of its lane, for 16-bit
// multiply-adds.
template <int j>
GroupVec::I scale_words(GroupVec::I scales) {
    return GroupVec::shuffle(scales, lane_bytes<j, -1, j, -1>());
}

// Each row's signed bytes j0 and j1 of words (a row per lane) as the 16-bit halves of its lane.
template <int j0, int j1>
GroupVec::I signed_words(GroupVec::I words) {
    return GroupVec::srai16(GroupVec::shuffle(words, lane_bytes<-1, j0, -1, j1>()), 8);
}

// The 6-bit scales and mins of a group super-block's rows, 4 to a lane (sub-blocks 0 .. 3 in lo,
// 4 .. 7 in hi), as k_block_scales unpacks them.
struct Q4_KGroupScales {
    GroupVec::I scale_lo, scale_hi, min_lo, min_hi;
};
inline Q4_KGroupScales q4_k_group_scales(const Q4_KGroup& g) {
    using V = GroupVec;
    const V::I low4 = V::set1_epi32(0x0f0f0f0f), low6 = V::set1_epi32(0x3f3f3f3f), low2 = V::set1_epi32(0x03030303);
    const V::I w0 = V::load(g.scales[0]), w1 = V::load(g.scales[1]), w2 = V::load(g.scales[2]);
    return {V::and_(w0, low6), V::or_(V::and_(w2, low4), V::slli32(V::and_(V::srli32(w0, 6), low2), 4)),
            V::and_(w1, low6), V::or_(V::and_(V::srli32(w2, 4), low4), V::slli32(V::and_(V::srli32(w1, 6), low2), 4))};
}

// The mins of chunks (0, 1), (2, 3), (4, 5), (6, 7) as 16-bit pairs, what the pairs of activation
// sums (sum_pair) multiply.
inline void q4_k_min_pairs(const Q4_KGroupScales& s, GroupVec::I (&mins)[4]) {
    mins[0] = GroupVec::shuffle(s.min_lo, lane_bytes<0, -1, 1, -1>());
    mins[1] = GroupVec::shuffle(s.min_lo, lane_bytes<2, -1, 3, -1>());
    mins[2] = GroupVec::shuffle(s.min_hi, lane_bytes<0, -1, 1, -1>());
    mins[3] = GroupVec::shuffle(s.min_hi, lane_bytes<2, -1, 3, -1>());
}

// Activation row i's sums of q per 32 at super-block b as 4 dwords of 16-bit pairs (chunks 2p,
// 2p + 1), what q4_k_min_pairs multiply.
inline int32_t sum_pair(const SuperblockRows& x, int64_t i, int64_t b, int p) {
    int32_t pair;
    __builtin_memcpy(&pair, x.sums32 + i * (x.k / 32) + 8 * b + 2 * p, 4);
    return pair;
}

// acc plus activation row i's product with a group super-block b of Q4_K or Q5_K: d times sum (its
// values times the sub-block scales) less dmin times the mins (q4_k_min_pairs) times the row's sums
// per 32.
inline GroupVec::F k_superblock_step(const SuperblockRows& x, int64_t i, int64_t b, GroupVec::I sum,
                                     const GroupVec::I (&mins)[4], GroupVec::F d, GroupVec::F dmin, GroupVec::F acc) {
    using V = GroupVec;
    V::I min_sum = V::zero_i();
#pragma GCC unroll 4
    for (int p = 0; p < 4; ++p) min_sum = V::dot16(min_sum, mins[p], V::set1_epi32(sum_pair(x, i, b, p)));
    const V::F dx = V::set1(x.d[i * (x.k / kSuperBlock) + b]);
    acc = V::fma(V::to_float(sum), V::mul(d, dx), acc);
    return V::fnma(V::to_float(min_sum), V::mul(dmin, dx), acc);
}

// The low and the high nibbles of every byte of v.
inline void split_nibbles(GroupVec::I v, GroupVec::I& lo, GroupVec::I& hi) {
    const GroupVec::I low4 = GroupVec::set1_epi32(0x0f0f0f0f);
    lo = GroupVec::and_(v, low4);
    hi = GroupVec::and_(GroupVec::srli32(v, 4), low4);
}

// The values of chunks 2m (low) and 2m + 1 (high) in vector c of a group super-block, per type of
// group: Q4_K's nibbles; Q5_K's with their fifth bits (bits 2m and 2m + 1 of its qh dword).
struct Q4_KValues {
    using Type = Q4_K;
    using Group = Q4_KGroup;
    static constexpr int kPanelFrom = kGroupPanelFrom.q4_k;
    static const Q4_KGroup& fields(const Group& g) { return g; }
    static void values(const Group& g, int m, int c, GroupVec::I& lo, GroupVec::I& hi) {
        split_nibbles(GroupVec::load(g.qs[m][c]), lo, hi);
    }
};
struct Q5_KValues {
    using Type = Q5_K;
    using Group = Q5_KGroup;
    static constexpr int kPanelFrom = kGroupPanelFrom.q5_k;
    static const Q4_KGroup& fields(const Group& g) { return g.g; }
    static void values(const Group& g, int m, int c, GroupVec::I& lo, GroupVec::I& hi) {
        using V = GroupVec;
        Q4_KValues::values(g.g, m, c, lo, hi);
        const V::I h = V::load(g.qh[c]), fifth = V::set1_epi32(0x10101010);
        lo = V::or_and(lo, m == 0 ? V::slli32(h, 4) : m == 1 ? V::slli32(h, 2) : m == 2 ? h : V::srli32(h, 2), fifth);
        hi = V::or_and(hi, m == 0 ? V::slli32(h, 3) : m == 1 ? V::slli32(h, 1) : m == 2 ? V::srli32(h, 1) : V::srli32(h, 3), fifth);
    }
};

// y (RM, kGroupRows) = x (RM rows) . the group's rows (a group of T's Group).
template <class T, int RM>
void k_group_tile(const SuperblockRows& x, const typename T::Group* group, float* y, int64_t ldy) {
    using V = GroupVec;
    const int64_t n_blocks = x.k / kSuperBlock;
    // without VNNI, runs of as many vectors as 16-bit pair sums hold: Q4_K 8, Q5_K 4
    constexpr int kRun = V::kPairSums16 ? pair_sums_in_16_bits(T::Type::kMaxByte, 8) : 8;
    V::F acc[RM];
#pragma GCC unroll 4
    for (int i = 0; i < RM; ++i) acc[i] = V::zero();
    for (int64_t b = 0; b < n_blocks; ++b) {
        const typename T::Group& group_b = group[b];
        const Q4_KGroup& g = T::fields(group_b);
        const Q4_KGroupScales s = q4_k_group_scales(g);
        V::I sum[RM];
#pragma GCC unroll 4
        for (int i = 0; i < RM; ++i) sum[i] = V::zero_i();
#pragma GCC unroll 8
        for (int run = 0; run < 32 / kRun; ++run) {  // chunks 2m (low nibbles) and 2m + 1 (high)
            const int m = run * kRun / 8, c0 = run * kRun % 8;
            prefetch_part(reinterpret_cast<const uint8_t*>(&group_b) + kGroupPrefetchBytes, sizeof(group_b), run, 32 / kRun);
            // chunk sums: dpbusd into 32 bits, or without VNNI maddubs' pair sums kept in 16 bits,
            // which one madd then multiplies by the scale
            V::I lo[RM], hi[RM];
#pragma GCC unroll 4
            for (int i = 0; i < RM; ++i) lo[i] = hi[i] = V::zero_i();
#pragma GCC unroll 8
            for (int c = c0; c < c0 + kRun; ++c) {
                V::I wl, wh;
                T::values(group_b, m, c, wl, wh);
#pragma GCC unroll 4
                for (int i = 0; i < RM; ++i) {
                    const int8_t* a = x.q + i * x.k + kSuperBlock * b + 64 * m + 4 * c;
                    int32_t a_lo, a_hi;
                    __builtin_memcpy(&a_lo, a, 4);
                    __builtin_memcpy(&a_hi, a + 32, 4);
                    if constexpr (V::kPairSums16) {
                        lo[i] = V::add_byte_pairs(lo[i], wl, a_lo);
                        hi[i] = V::add_byte_pairs(hi[i], wh, a_hi);
                    } else {
                        lo[i] = V::dot(lo[i], wl, a_lo);
                        hi[i] = V::dot(hi[i], wh, a_hi);
                    }
                }
            }
            const V::I scales = m < 2 ? s.scale_lo : s.scale_hi;
            if constexpr (V::kPairSums16) {  // each row's scale in both 16-bit halves of its lane
                V::I w_lo, w_hi;
                if (m % 2 == 0) w_lo = scale_words<0>(scales), w_hi = scale_words<1>(scales);
                else w_lo = scale_words<2>(scales), w_hi = scale_words<3>(scales);
#pragma GCC unroll 4
                for (int i = 0; i < RM; ++i) sum[i] = V::dot16(V::dot16(sum[i], lo[i], w_lo), hi[i], w_hi);
                continue;
            }
            V::I s_lo, s_hi;  // chunk 2m's and 2m + 1's scale of each row (bytes 2m % 4, 2m % 4 + 1)
            if (m % 2 == 0) s_lo = V::shuffle(scales, lane_bytes<0, -1, -1, -1>()), s_hi = V::shuffle(scales, lane_bytes<1, -1, -1, -1>());
            else s_lo = V::shuffle(scales, lane_bytes<2, -1, -1, -1>()), s_hi = V::shuffle(scales, lane_bytes<3, -1, -1, -1>());
#pragma GCC unroll 4
            for (int i = 0; i < RM; ++i) sum[i] = V::add32(sum[i], V::add32(V::mul32(lo[i], s_lo), V::mul32(hi[i], s_hi)));
        }
        V::I mins[4];
        q4_k_min_pairs(s, mins);
        const V::F d = V::halves(g.d), dmin = V::halves(g.dmin);
#pragma GCC unroll 4
        for (int i = 0; i < RM; ++i) acc[i] = k_superblock_step(x, i, b, sum[i], mins, d, dmin, acc[i]);
    }
#pragma GCC unroll 4
    for (int i = 0; i < RM; ++i) V::store_all(y + i * ldy, acc[i]);
}

template <class T, int RM>
void k_group_edge(int rm, const SuperblockRows& x, const typename T::Group* group, float* y, int64_t ldy) {
    if constexpr (RM > 1) {
        if (rm < RM) return k_group_edge<T, RM - 1>(rm, x, group, y, ldy);
    }
    k_group_tile<T, RM>(x, group, y, ldy);
}

// superblock_gemm on groups of T: w is a group's first super-block, rows a multiple of kGroupRows
// (groups kGroupRows * ldw bytes apart).
template <class T>
void k_groups_superblock_gemm(const SuperblockRows& x, int n, const void* w, int64_t ldw, int rows, float* y,
                              int64_t ldy) {
    const auto* groups = static_cast<const uint8_t*>(w);
    for (int r = 0; r < rows; r += kGroupRows) {
        const auto* group = reinterpret_cast<const typename T::Group*>(groups + r * ldw);
        for (int t = 0; t < n; t += kGroupTileRows)
            k_group_edge<T, kGroupTileRows>(n - t < kGroupTileRows ? n - t : kGroupTileRows, x.from(t), group,
                                            y + t * ldy + r, ldy);
    }
}

#if defined(LLAMADESK_CPU_VNNI)  // without VNNI, prefill takes the super-block panels below
// A prefill panel (pack_panel's layout) from a group: each chunk's bytes are the group's values
// (T::values), its scales and offsets d * scale and -dmin * min per row, from the group's scale
// words with a row in each lane (decoding them row by row was a fifth of the packing: perf, 8B Q5_K_M
// prefill, packing 10.4 -> 8.4 % of the tiles' samples).
template <class T>
void pack_panel_k_group(const typename T::Group* group, int64_t n_chunks, PanelChunk<typename T::Type>* panel) {
    using V = GroupVec;
    const V::I byte = V::set1_epi32(0xff);
    for (int64_t b = 0; b < n_chunks / 8; ++b) {
        const Q4_KGroup& g = T::fields(group[b]);
        const Q4_KGroupScales s = q4_k_group_scales(g);  // lane r: row r's chunk scales and mins, a byte each
        const V::F d = V::halves(g.d), minus_dmin = V::mul(V::halves(g.dmin), V::set1(-1.0f));
        for (int j = 0; j < 8; ++j) {
            PanelChunk<typename T::Type>& p = panel[b * 8 + j];
            if (j % 2 == 0)  // chunks j and j + 1: the low and high nibbles of run j / 2
                for (int c = 0; c < 8; ++c) T::values(group[b], j / 2, c, p.q[c], panel[b * 8 + j + 1].q[c]);
            const int shift = 8 * (j % 4);
            p.scale[0] = V::mul(V::to_float(V::and_(V::srli32(j < 4 ? s.scale_lo : s.scale_hi, shift), byte)), d);
            p.offset = V::mul(V::to_float(V::and_(V::srli32(j < 4 ? s.min_lo : s.min_hi, shift), byte)), minus_dmin);
        }
    }
}

// superblock_gemm on groups with VNNI for any number of activation rows: decode's group tiles below
// T::kPanelFrom, the chunk panels from there on. Super-block activations leave the panels one float
// step per chunk fewer than activations quantized per 32 (the activation's d, once per 8 chunks).
template <class T>
void k_groups_panel_gemm(const SuperblockRows& x, int n, const void* w, int64_t ldw, int rows, float* y, int64_t ldy) {
    if (n < T::kPanelFrom) return k_groups_superblock_gemm<T>(x, n, w, ldw, rows, y, ldy);
    const auto* groups = static_cast<const uint8_t*>(w);
    panel_gemm<typename T::Type>(x, n, groups, ldw, rows, y, ldy, [&](int r, int, int64_t n_chunks, PanelChunk<typename T::Type>* panel) {
        pack_panel_k_group<T>(reinterpret_cast<const typename T::Group*>(groups + r * ldw), n_chunks, panel);
    });
}

#endif

constexpr SuperblockGemmFn q4_k_groups_superblock_gemm = &k_groups_superblock_gemm<Q4_KValues>;
constexpr SuperblockGemmFn q5_k_groups_superblock_gemm = &k_groups_superblock_gemm<Q5_KValues>;

// Q6_K in groups. A group's super-block b, 210 * kGroupRows bytes:
//   ql[h][run][c][r][i]  byte 4c + i of row r's run (of 32 bytes) of half h's ql: chunk 4h + run in
//                        the low nibbles, 4h + run + 2 in the high ones (blocks.h)
//   qh[h][c][r][i]       byte 4c + i of row r's half h of qh: bits 2j, 2j + 1 the high bits of chunk 4h + j
//   scales[w][r]         dword w (of 4) of row r's 16 signed sub-block scales
//   d[r]
struct Q6_KGroup {
    uint8_t ql[2][2][8][kGroupRows][4];
    uint8_t qh[2][8][kGroupRows][4];
    int32_t scales[4][kGroupRows];
    uint16_t d[kGroupRows];
};
static_assert(sizeof(Q6_KGroup) == kGroupRows * sizeof(quant::BlockQ6_K));

template <bool ToGroup>
void move_q6_k_row(const void* row, int r, int64_t k, const void* group) {
    for (int64_t b = 0; b < k / kSuperBlock; ++b) {
        const auto& block = static_cast<const quant::BlockQ6_K*>(row)[b];
        const Q6_KGroup& g = static_cast<const Q6_KGroup*>(group)[b];
        move_bytes<ToGroup>(&block.d, &g.d[r], 2);
        for (int word = 0; word < 4; ++word) move_bytes<ToGroup>(block.scales + 4 * word, &g.scales[word][r], 4);
        for (int h = 0; h < 2; ++h)
            for (int c = 0; c < 8; ++c) {
                for (int run = 0; run < 2; ++run) move_bytes<ToGroup>(block.ql + 64 * h + 32 * run + 4 * c, g.ql[h][run][c][r], 4);
                move_bytes<ToGroup>(block.qh + 32 * h + 4 * c, g.qh[h][c][r], 4);
            }
    }
}

// Chunk 4h + j's 6-bit values in vector c (bytes 4c .. 4c + 3 of the chunk, every row): a nibble
// of ql, and bits 2j, 2j + 1 of qh moved to bits 4, 5.
inline GroupVec::I q6_values(const Q6_KGroup& g, int h, int j, int c) {
    using V = GroupVec;
    const V::I ql = V::load(g.ql[h][j % 2][c]), qh = V::load(g.qh[h][c]), low4 = V::set1_epi32(0x0f0f0f0f);
    const V::I nibble = j < 2 ? V::and_(ql, low4) : V::and_(V::srli32(ql, 4), low4);
    const V::I high = j == 0 ? V::slli32(qh, 4) : j == 1 ? V::slli32(qh, 2) : j == 2 ? qh : V::srli32(qh, 2);
    return V::or_and(nibble, high, V::set1_epi32(0x30303030));
}

// Each row's signed scale of sub-block s (byte s % 4 of dword s / 4) as a 32-bit integer.
inline GroupVec::I q6_scale(const Q6_KGroup& g, int s) {
    const GroupVec::I words = GroupVec::load(g.scales[s / 4]);
    GroupVec::I top;  // the byte moved to the top of its lane, then shifted down with its sign
    switch (s % 4) {
        case 0: top = GroupVec::shuffle(words, lane_bytes<-1, -1, -1, 0>()); break;
        case 1: top = GroupVec::shuffle(words, lane_bytes<-1, -1, -1, 1>()); break;
        case 2: top = GroupVec::shuffle(words, lane_bytes<-1, -1, -1, 2>()); break;
        default: top = GroupVec::shuffle(words, lane_bytes<-1, -1, -1, 3>()); break;
    }
    return GroupVec::srai32(top, 24);
}

// Q6_K's values are 0 .. 63 for q - 32. Without VNNI a maddubs pair sum of q is at most 2 x 63 x
// 127, so only two vectors' would add up in 16 bits before a madd. Each run of pair sums instead
// starts at -32 times the activation's sums of the bytes it multiplies (its sub-block's even and odd
// byte pairs): the run's value is then sum (q - 32) a, within 4 x 2 x 32 x 127 = 32512, and 16-bit
// adds that wrap on the way still end on it exactly. A whole sub-block (4 vectors) then takes one
// madd by its scale, and the super-block's step has no -32 term left. With VNNI, dpbusd sums into 32
// bits and the -32 meets the activation's sums per 16 once per super-block instead.
// llamadesk-kernel-bench --isa avx2 --types q6_k --rows 14336 --cols 4096 --tokens 1,4,6 --copies 8
// --runs 10, 2 Zen 3 cores, four runs each in turn, decode's tiles before -> after, GMAC/s: n=1
// 31-38 -> 34-45 (weights at 25-31 -> 28-37 GB/s), n=4 56-67 -> 64-80, n=6 67-71 -> 84-90.
constexpr bool kQ6Centred = GroupVec::kPairSums16;
static_assert(!kQ6Centred || 4 * 2 * -Q6_K::kIntOffset * 127 <= 32767, "a centred run fits 16 bits");

// The starts of x's first n rows: [t * k / 16 + s] for row t's sub-block s, -32 times the sums of
// its bytes 4v and 4v + 1 (low 16 bits) and 4v + 2 and 4v + 3 (high), what maddubs pairs with them.
// Laid out once per quantization and thread, for all the items of the products that share x, as
// panel_gemm's scalars are (SuperblockRows::serial; 0, a view, is laid out every time).
inline const int32_t* q6_k_run_starts(const SuperblockRows& x, int n) {
    thread_local std::vector<int32_t> starts;
    thread_local uint64_t starts_serial = 0;
    if (x.serial != 0 && x.serial == starts_serial) return starts.data();
    starts.resize(size_t(n) * size_t(x.k / 16));
    for (int64_t t = 0; t < n; ++t)
        for (int64_t s = 0; s < x.k / 16; ++s) {
            const int8_t* a = x.q + t * x.k + 16 * s;
            int even = 0, odd = 0;
            for (int v = 0; v < 4; ++v) even += a[4 * v] + a[4 * v + 1], odd += a[4 * v + 2] + a[4 * v + 3];
            starts[size_t(t * (x.k / 16) + s)] = int32_t(uint32_t(uint16_t(Q6_K::kIntOffset * even)) |
                                                         uint32_t(uint16_t(Q6_K::kIntOffset * odd)) << 16);
        }
    starts_serial = x.serial;
    return starts.data();
}

// Each row's signed scale of sub-block s (byte s % 4 of dword s / 4) in both 16-bit halves of its
// lane, for the centred runs' madd.
inline GroupVec::I q6_scale_words(const Q6_KGroup& g, int s) {
    const GroupVec::I words = GroupVec::load(g.scales[s / 4]);
    switch (s % 4) {
        case 0: return signed_words<0, 0>(words);
        case 1: return signed_words<1, 1>(words);
        case 2: return signed_words<2, 2>(words);
        default: return signed_words<3, 3>(words);
    }
}

// As k_group_tile. starts: q6_k_run_starts's for these rows where kQ6Centred.
template <int RM>
void q6_k_group_tile(const SuperblockRows& x, const int32_t* starts, const Q6_KGroup* group, float* y, int64_t ldy) {
    using V = GroupVec;
    const int64_t n_blocks = x.k / kSuperBlock;
    V::F acc[RM];
#pragma GCC unroll 4
    for (int i = 0; i < RM; ++i) acc[i] = V::zero();
    for (int64_t b = 0; b < n_blocks; ++b) {
        const Q6_KGroup& g = group[b];
        V::I sum[RM];
#pragma GCC unroll 4
        for (int i = 0; i < RM; ++i) sum[i] = V::zero_i();
#pragma GCC unroll 2
        for (int h = 0; h < 2; ++h)
#pragma GCC unroll 2
            for (int half = 0; half < 2; ++half) {  // vectors 4 half .. 4 half + 3: sub-block 2 chunk + half
                prefetch_part(reinterpret_cast<const uint8_t*>(&g) + kGroupPrefetchBytes, sizeof(Q6_KGroup), 2 * h + half, 4);
                V::I part[RM][4];
#pragma GCC unroll 4
                for (int i = 0; i < RM; ++i)
#pragma GCC unroll 4
                    for (int j = 0; j < 4; ++j)
                        part[i][j] = kQ6Centred ? V::set1_epi32(starts[i * (x.k / 16) + 16 * b + 2 * (4 * h + j) + half]) : V::zero_i();
#pragma GCC unroll 4
                for (int c = 4 * half; c < 4 * half + 4; ++c)
#pragma GCC unroll 4
                    for (int j = 0; j < 4; ++j) {
                        const V::I q = q6_values(g, h, j, c);
#pragma GCC unroll 4
                        for (int i = 0; i < RM; ++i) {
                            int32_t four;
                            __builtin_memcpy(&four, x.q + i * x.k + kSuperBlock * b + 32 * (4 * h + j) + 4 * c, 4);
                            if constexpr (kQ6Centred) part[i][j] = V::add_byte_pairs(part[i][j], q, four);
                            else part[i][j] = V::dot(part[i][j], q, four);
                        }
                    }
#pragma GCC unroll 4
                for (int j = 0; j < 4; ++j) {
                    const int s = 2 * (4 * h + j) + half;
                    if constexpr (kQ6Centred) {
                        const V::I scale = q6_scale_words(g, s);
#pragma GCC unroll 4
                        for (int i = 0; i < RM; ++i) sum[i] = V::dot16(sum[i], part[i][j], scale);
                    } else {
                        const V::I scale = q6_scale(g, s);
#pragma GCC unroll 4
                        for (int i = 0; i < RM; ++i) sum[i] = V::add32(sum[i], V::mul32(part[i][j], scale));
                    }
                }
            }
        if constexpr (!kQ6Centred) {
            // sum of scale * sum of q per 16, in 16-bit pairs of sub-blocks (2p, 2p + 1)
            V::I pair_scales[8];
#pragma GCC unroll 8
            for (int p = 0; p < 8; ++p) {
                const V::I words = V::load(g.scales[p / 2]);
                pair_scales[p] = p % 2 ? signed_words<2, 3>(words) : signed_words<0, 1>(words);
            }
#pragma GCC unroll 4
            for (int i = 0; i < RM; ++i) {
                const int16_t* sums = x.sums + 16 * (i * n_blocks + b);
                V::I offset = V::zero_i();
#pragma GCC unroll 8
                for (int p = 0; p < 8; ++p) {
                    int32_t pair;
                    __builtin_memcpy(&pair, sums + 2 * p, 4);
                    offset = V::dot16(offset, pair_scales[p], V::set1_epi32(pair));
                }
                sum[i] = V::add32(sum[i], V::mul32(offset, V::set1_epi32(Q6_K::kIntOffset)));
            }
        }
        const V::F d = V::halves(g.d);
#pragma GCC unroll 4
        for (int i = 0; i < RM; ++i) acc[i] = V::fma(V::to_float(sum[i]), V::mul(d, V::set1(x.d[i * n_blocks + b])), acc[i]);
    }
#pragma GCC unroll 4
    for (int i = 0; i < RM; ++i) V::store_all(y + i * ldy, acc[i]);
}

template <int RM>
void q6_k_group_edge(int rm, const SuperblockRows& x, const int32_t* starts, const Q6_KGroup* group, float* y, int64_t ldy) {
    if constexpr (RM > 1) {
        if (rm < RM) return q6_k_group_edge<RM - 1>(rm, x, starts, group, y, ldy);
    }
    q6_k_group_tile<RM>(x, starts, group, y, ldy);
}

void q6_k_groups_superblock_gemm(const SuperblockRows& x, int n, const void* w, int64_t ldw, int rows, float* y,
                                 int64_t ldy) {
    const auto* groups = static_cast<const uint8_t*>(w);
    const int32_t* starts = kQ6Centred ? q6_k_run_starts(x, n) : nullptr;
    for (int r = 0; r < rows; r += kGroupRows)
        for (int t = 0; t < n; t += kQ6GroupTileRows) {
            const SuperblockRows rows_t = x.from(t);
            q6_k_group_edge<kQ6GroupTileRows>(n - t < kQ6GroupTileRows ? n - t : kQ6GroupTileRows, rows_t,
                                              kQ6Centred ? starts + t * (x.k / 16) : nullptr,
                                              reinterpret_cast<const Q6_KGroup*>(groups + r * ldw), y + t * ldy + r, ldy);
        }
}

#if defined(LLAMADESK_CPU_VNNI)  // without VNNI, prefill takes the super-block panels below
// pack_panel_k_group's for Q6_K: each chunk's two scales d * scale, with a row in each lane (decoded
// row by row, the packing took 13.6 % of the tiles' time in an 8B Q6_K prefill, against 8.0 %).
void pack_panel_q6_k_group(const Q6_KGroup* group, int64_t n_chunks, PanelChunk<Q6_K>* panel) {
    using V = GroupVec;
    for (int64_t b = 0; b < n_chunks / 8; ++b) {
        const Q6_KGroup& g = group[b];
        const V::F d = V::halves(g.d);
        for (int chunk = 0; chunk < 8; ++chunk) {
            PanelChunk<Q6_K>& p = panel[b * 8 + chunk];
            for (int c = 0; c < 8; ++c) p.q[c] = q6_values(g, chunk / 4, chunk % 4, c);
            for (int half = 0; half < 2; ++half) p.scale[half] = V::mul(V::to_float(q6_scale(g, 2 * chunk + half)), d);
        }
    }
}

// k_groups_panel_gemm's for Q6_K
void q6_k_groups_panel_gemm(const SuperblockRows& x, int n, const void* w, int64_t ldw, int rows, float* y, int64_t ldy) {
    if (n < kGroupPanelFrom.q6_k) return q6_k_groups_superblock_gemm(x, n, w, ldw, rows, y, ldy);
    const auto* groups = static_cast<const uint8_t*>(w);
    panel_gemm<Q6_K>(x, n, groups, ldw, rows, y, ldy, [&](int r, int, int64_t n_chunks, PanelChunk<Q6_K>* panel) {
        pack_panel_q6_k_group(reinterpret_cast<const Q6_KGroup*>(groups + r * ldw), n_chunks, panel);
    });
}
#endif

#if !defined(LLAMADESK_CPU_VNNI)
// K-quant prefill without VNNI. The panels of quant_panels_x86.h pay a float step (convert, scale,
// accumulate, and the offset's) per sub-block for each activation row: per 32 values of Q4_K and
// Q5_K, per 16 of Q6_K, where it is a third of the work. From super-block activations (q8_K) the
// sub-block scales enter the 16-bit multiply-add instead, as in decode, and one step per super-block
// remains. A thread unpacks each group once per product into super-block panels (a few dozen KiB),
// which every activation row then passes over. llamadesk-kernel-bench --isa avx2 --rows 14336
// --cols 4096 --tokens 512, 2 Xeon cores, against the chunk panels: Q4_K 184 -> 209-211 GMAC/s,
// Q5_K 178 -> 183-201, Q6_K 140 -> 172-176.
//
// A super-block panel (P::Block) holds the group super-block's values in 64 vectors, vector v
// holding bytes 4v .. 4v + 3 of each row (what the activation's bytes 4v .. 4v + 3 multiply), and
// each sub-block's scales. P says how many vectors a sub-block spans, how a group becomes a panel
// and what the super-block's step adds: the mins (Q4_K, Q5_K) or Q6_K's -32.
template <class Values>
struct KSuperPanel {
    using Group = typename Values::Group;
    static constexpr int kPanelFrom = Values::kPanelFrom;
    static constexpr int kSubBlockVectors = 8;
    static constexpr int kRun = pair_sums_in_16_bits(Values::Type::kMaxByte, kSubBlockVectors);  // Q4_K 8, Q5_K 4
    static constexpr bool kCentred = false;
    struct Block {
        GroupVec::I q[64];
        GroupVec::I scale[8];  // each row's scale of sub-block s in both 16-bit halves of its lane
        GroupVec::I mins[4];   // q4_k_min_pairs
        GroupVec::F d, dmin;
    };
    static void pack(const Group& group, Block& p) {
        const Q4_KGroup& g = Values::fields(group);
        const Q4_KGroupScales s = q4_k_group_scales(g);
        for (int m = 0; m < 4; ++m)  // run m: chunks 2m and 2m + 1
            for (int c = 0; c < 8; ++c) Values::values(group, m, c, p.q[16 * m + c], p.q[16 * m + 8 + c]);
        p.scale[0] = scale_words<0>(s.scale_lo), p.scale[1] = scale_words<1>(s.scale_lo);
        p.scale[2] = scale_words<2>(s.scale_lo), p.scale[3] = scale_words<3>(s.scale_lo);
        p.scale[4] = scale_words<0>(s.scale_hi), p.scale[5] = scale_words<1>(s.scale_hi);
        p.scale[6] = scale_words<2>(s.scale_hi), p.scale[7] = scale_words<3>(s.scale_hi);
        q4_k_min_pairs(s, p.mins);
        p.d = GroupVec::halves(g.d);
        p.dmin = GroupVec::halves(g.dmin);
    }
    template <int RM>
    static void step(const SuperblockRows& x, int64_t b, const Block& p, const GroupVec::I (&sum)[RM],
                     GroupVec::F (&acc)[RM]) {
#pragma GCC unroll 4
        for (int i = 0; i < RM; ++i) acc[i] = k_superblock_step(x, i, b, sum[i], p.mins, p.d, p.dmin, acc[i]);
    }
};

// Q6_K's runs are centred (kQ6Centred): a whole sub-block adds up in 16 bits before one madd.
struct Q6_KSuperPanel {
    using Group = Q6_KGroup;
    static constexpr int kPanelFrom = kGroupPanelFrom.q6_k;
    static constexpr int kSubBlockVectors = 4;
    static constexpr int kRun = kSubBlockVectors;
    static constexpr bool kCentred = true;
    static_assert(kCentred == kQ6Centred);
    struct Block {
        GroupVec::I q[64];
        GroupVec::I scale[16];
        GroupVec::F d;
    };
    static void pack(const Q6_KGroup& g, Block& p) {
        for (int j = 0; j < 8; ++j)
            for (int c = 0; c < 8; ++c) p.q[8 * j + c] = q6_values(g, j / 4, j % 4, c);
#pragma GCC unroll 16
        for (int s = 0; s < 16; ++s) p.scale[s] = q6_scale_words(g, s);
        p.d = GroupVec::halves(g.d);
    }
    static const int32_t* run_starts(const SuperblockRows& x, int n) { return q6_k_run_starts(x, n); }
    template <int RM>
    static void step(const SuperblockRows& x, int64_t b, const Block& p, const GroupVec::I (&sum)[RM],
                     GroupVec::F (&acc)[RM]) {
        const int64_t n_blocks = x.k / kSuperBlock;
#pragma GCC unroll 4
        for (int i = 0; i < RM; ++i)
            acc[i] = GroupVec::fma(GroupVec::to_float(sum[i]), GroupVec::mul(p.d, GroupVec::set1(x.d[i * n_blocks + b])), acc[i]);
    }
};

// starts: P::run_starts's for these rows where P is centred.
template <class P, int RM>
void super_panel_tile(const SuperblockRows& x, const int32_t* starts, const typename P::Block* panel, float* y,
                      int64_t ldy) {
    using V = GroupVec;
    constexpr int kSubBlocks = 64 / P::kSubBlockVectors, kRun = P::kRun;
    const int64_t n_blocks = x.k / kSuperBlock;
    V::F acc[RM];
#pragma GCC unroll 4
    for (int i = 0; i < RM; ++i) acc[i] = V::zero();
    for (int64_t b = 0; b < n_blocks; ++b) {
        const typename P::Block& p = panel[b];
        V::I sum[RM];
#pragma GCC unroll 4
        for (int i = 0; i < RM; ++i) sum[i] = V::zero_i();
#pragma GCC unroll 16
        for (int sub = 0; sub < kSubBlocks; ++sub)
#pragma GCC unroll 4
            for (int v0 = sub * P::kSubBlockVectors; v0 < (sub + 1) * P::kSubBlockVectors; v0 += kRun) {
                V::I pairs[RM];
#pragma GCC unroll 4
                for (int i = 0; i < RM; ++i)
                    pairs[i] = P::kCentred ? V::set1_epi32(starts[i * (x.k / 16) + 16 * b + sub]) : V::zero_i();
#pragma GCC unroll 8
                for (int v = v0; v < v0 + kRun; ++v)
#pragma GCC unroll 4
                    for (int i = 0; i < RM; ++i) {
                        int32_t four;
                        __builtin_memcpy(&four, x.q + i * x.k + kSuperBlock * b + 4 * v, 4);
                        pairs[i] = V::add_byte_pairs(pairs[i], p.q[v], four);
                    }
#pragma GCC unroll 4
                for (int i = 0; i < RM; ++i) sum[i] = V::dot16(sum[i], pairs[i], p.scale[sub]);
            }
        P::template step<RM>(x, b, p, sum, acc);
    }
#pragma GCC unroll 4
    for (int i = 0; i < RM; ++i) V::store_all(y + i * ldy, acc[i]);
}

template <class P, int RM>
void super_panel_edge(int rm, const SuperblockRows& x, const int32_t* starts, const typename P::Block* panel, float* y,
                      int64_t ldy) {
    if constexpr (RM > 1) {
        if (rm < RM) return super_panel_edge<P, RM - 1>(rm, x, starts, panel, y, ldy);
    }
    super_panel_tile<P, RM>(x, starts, panel, y, ldy);
}

// superblock_gemm on groups of P for any number of activation rows: Decode's group tiles below
// P::kPanelFrom, the super-block panels from there on.
template <class P, SuperblockGemmFn Decode>
void groups_super_panel_gemm(const SuperblockRows& x, int n, const void* w, int64_t ldw, int rows, float* y,
                             int64_t ldy) {
    if (n < P::kPanelFrom) return Decode(x, n, w, ldw, rows, y, ldy);
    const int64_t n_blocks = x.k / kSuperBlock;
    thread_local std::vector<typename P::Block> panel;
    panel.resize(size_t(n_blocks));
    const int32_t* starts = nullptr;
    if constexpr (P::kCentred) starts = P::run_starts(x, n);
    const auto* groups = static_cast<const uint8_t*>(w);
    for (int r = 0; r < rows; r += kGroupRows) {
        const auto* group = reinterpret_cast<const typename P::Group*>(groups + r * ldw);
        for (int64_t b = 0; b < n_blocks; ++b) P::pack(group[b], panel[size_t(b)]);
        for (int t = 0; t < n; t += PanelVec::kTileRows)
            super_panel_edge<P, PanelVec::kTileRows>(n - t < PanelVec::kTileRows ? n - t : PanelVec::kTileRows,
                                                     x.from(t), P::kCentred ? starts + t * (x.k / 16) : nullptr, panel.data(),
                                                     y + t * ldy + r, ldy);
    }
}
#endif
