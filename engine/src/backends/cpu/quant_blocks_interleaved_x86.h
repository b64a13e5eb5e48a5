// Q4_0 weights regrouped at load as Q4_K's are (quant_interleaved_x86.h, whose vectors it shares):
// lane r of every vector belongs to row r of a group of kGroupRows rows, as llama.cpp's repack
// (q4_0_8x8). quant_kernels_x86.h includes it after the K-quant groups, in every x86 set.
//
// On plain rows a decode tile pays, per block of 32 and weight row, a dot, a conversion, two float
// multiplies and at the end a horizontal sum: Q4_0's 18 bytes a block are too few to pay for it,
// so its decode streamed at 15 GB/s where Q8_0's reached 23. Here one vector load holds 4 packed
// bytes of each row of the group, a broadcast activation dword is multiplied into every row at once,
// and the float step of a block is shared by the group's rows. llamadesk-kernel-bench, 2 Xeon
// cores, 14336 x 4096 x 30 copies, one token: 18.0-18.6 GB/s on groups against 12.1 on rows (amx
// set), 15.5-16.5 against 6.7-7.3 (avx2).
//
// A group's block b, 18 * kGroupRows bytes, the same as its rows' blocks:
//   d[r]          row r's scale
//   qs[c][r][i]   byte 4c + i of row r's 16: element 4c + i in its low nibble, 16 + 4c + i in its high

struct Q4_0Group {
    uint16_t d[kGroupRows];
    uint8_t qs[4][kGroupRows][4];
};
static_assert(sizeof(Q4_0Group) == kGroupRows * sizeof(quant::BlockQ4_0));

// Row r of a group (k columns) and the plain row at row (move_bytes).
template <bool ToGroup>
void move_q4_0_row(const void* row, int r, int64_t k, const void* group) {
    for (int64_t b = 0; b < k / kActivationBlock; ++b) {
        const auto& block = static_cast<const quant::BlockQ4_0*>(row)[b];
        const Q4_0Group& g = static_cast<const Q4_0Group*>(group)[b];
        move_bytes<ToGroup>(&block.d, &g.d[r], 2);
        for (int c = 0; c < 4; ++c) move_bytes<ToGroup>(block.qs + 4 * c, g.qs[c][r], 4);
    }
}

// y (RM, kGroupRows) = x (RM rows) . the group's rows. A block's integer sum starts at Q4_0's offset
// (-8) times the activation block's sum of q, so one float step per block remains.
template <int RM>
void q4_0_group_tile(const QuantizedRows& x, const Q4_0Group* group, float* y, int64_t ldy) {
    using V = GroupVec;
    const int64_t n_blocks = x.k / kActivationBlock;
    V::F acc[RM];
#pragma GCC unroll 4
    for (int i = 0; i < RM; ++i) acc[i] = V::zero();
    for (int64_t b = 0; b < n_blocks; ++b) {
        const Q4_0Group& g = group[b];
        prefetch_ahead(reinterpret_cast<const uint8_t*>(&g) + kGroupPrefetchBytes, 0, sizeof(Q4_0Group));
        V::I sum[RM], pairs[RM];  // pairs: without VNNI, maddubs' pair sums (a block's fit 16 bits: 8 x 2 x 15 x 127)
#pragma GCC unroll 4
        for (int i = 0; i < RM; ++i) {
            const int32_t* halves = x.half_sums + 4 * (i * n_blocks + b);
            sum[i] = V::set1_epi32(Q4_0::kIntOffset * (halves[0] + halves[2]));
            pairs[i] = V::zero_i();
        }
#pragma GCC unroll 4
        for (int c = 0; c < 4; ++c) {
            V::I wl, wh;
            split_nibbles(V::load(g.qs[c]), wl, wh);
#pragma GCC unroll 4
            for (int i = 0; i < RM; ++i) {
                const int8_t* a = x.q + i * x.k + kActivationBlock * b + 4 * c;
                int32_t a_lo, a_hi;
                __builtin_memcpy(&a_lo, a, 4);
                __builtin_memcpy(&a_hi, a + 16, 4);
                if constexpr (V::kPairSums16) pairs[i] = V::add_byte_pairs(V::add_byte_pairs(pairs[i], wl, a_lo), wh, a_hi);
                else sum[i] = V::dot(V::dot(sum[i], wl, a_lo), wh, a_hi);
            }
        }
        const V::F d = V::halves(g.d);
#pragma GCC unroll 4
        for (int i = 0; i < RM; ++i) {
            if constexpr (V::kPairSums16) sum[i] = V::dot16(sum[i], pairs[i], V::set1_epi32(0x00010001));
            acc[i] = V::fma(V::to_float(sum[i]), V::mul(d, V::set1(x.d[i * n_blocks + b])), acc[i]);
        }
    }
#pragma GCC unroll 4
    for (int i = 0; i < RM; ++i) V::store_all(y + i * ldy, acc[i]);
}

template <int RM>
void q4_0_group_edge(int rm, const QuantizedRows& x, const Q4_0Group* group, float* y, int64_t ldy) {
    if constexpr (RM > 1) {
        if (rm < RM) return q4_0_group_edge<RM - 1>(rm, x, group, y, ldy);
    }
    q4_0_group_tile<RM>(x, group, y, ldy);
}

// A prefill panel (pack_panel's layout) from a group: each vector's low nibbles are a chunk's
// bytes 4c .. 4c + 3 of every row, its high nibbles bytes 16 + 4c ..
void pack_panel_q4_0_group(const Q4_0Group* group, int64_t n_chunks, PanelChunk<Q4_0>* panel) {
    using V = GroupVec;
    for (int64_t b = 0; b < n_chunks; ++b) {
        const Q4_0Group& g = group[b];
        PanelChunk<Q4_0>& p = panel[b];
        for (int c = 0; c < 4; ++c) split_nibbles(V::load(g.qs[c]), p.q[c], p.q[c + 4]);
        p.scale[0] = V::halves(g.d);
    }
}

// quantized_gemm on groups: the group tiles below kGroupPanelFrom.q4_0 activation rows, panels from
// the groups from there on.
void q4_0_groups_quantized_gemm(const QuantizedRows& x, int n, const void* w, int64_t ldw, int rows, int, float* y,
                                int64_t ldy) {
    const auto* groups = static_cast<const uint8_t*>(w);
    auto group = [&](int r) { return reinterpret_cast<const Q4_0Group*>(groups + r * ldw); };
    if (n >= kGroupPanelFrom.q4_0)
        return panel_gemm<Q4_0>(x, n, groups, ldw, rows, y, ldy, [&](int r, int, int64_t n_chunks, PanelChunk<Q4_0>* panel) {
            pack_panel_q4_0_group(group(r), n_chunks, panel);
        });
    for (int r = 0; r < rows; r += kGroupRows)
        for (int t = 0; t < n; t += kGroupTileRows)
            q4_0_group_edge<kGroupTileRows>(n - t < kGroupTileRows ? n - t : kGroupTileRows, x.from(t), group(r),
                                            y + t * ldy + r, ldy);
}
