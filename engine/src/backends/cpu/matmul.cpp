#include "backends/cpu/matmul.h"

#include <algorithm>
#include <atomic>
#include <vector>

namespace llamadesk::cpu {

namespace {

const TypeKernels& kernels_of(const Kernels& kernels, const TensorView& w) {
    return w.interleaved_rows ? kernels.interleaved[int(w.dtype)].on_groups : kernels.types[int(w.dtype)];
}

// How a product reads its activations: as floats, quantized per 32, per super-block of 256, or
// rounded to bf16 tiles.
enum class Input { Floats, Blocks, Superblocks, Bf16Tiles };

Input input_format(const TypeKernels& type, const TensorView& w, int n) {
    if (type.superblock_gemm && n <= type.superblock_max_tokens) return Input::Superblocks;
    if (type.bf16_tile_gemm && n >= kBf16TileMinTokens && w.cols % kBf16Step == 0) return Input::Bf16Tiles;
    return type.quantized_gemm ? Input::Blocks : Input::Floats;
}

// Weight rows per work item: about 8 items per thread so uneven threads even out, a multiple of
// the kernel's tile (for block types, its panel), and for a prefill the type's own number where it
// has one (float weights: on gemm's panels, from kFloatPanelMinTokens rows), else at most 128 KiB,
// so the slice stays in L2 while every slice of activation rows passes over it.
int64_t rows_per_item(const Kernels& kernels, const TensorView& w, int n, Input format, int n_threads) {
    int64_t chunk = w.rows / (int64_t(n_threads) * 8);
    const bool float_tiles = format == Input::Floats && n < kFloatPanelMinTokens;
    const int prefill_rows = float_tiles ? 0 : kernels_of(kernels, w).prefill_item_rows;
    if (n > 1 && prefill_rows) chunk = std::min<int64_t>(std::max<int64_t>(chunk, w.rows / (2 * n_threads)), prefill_rows);
    else if (n > 1) chunk = std::min<int64_t>(chunk, std::max<int64_t>(1, (128 * 1024) / w.row_bytes()));
    const int64_t tile = w.interleaved_rows             ? w.interleaved_rows
                         : kernels.types[int(w.dtype)].quantized_gemm ? kernels.block_tile_rows
                                                                      : kernels.tile_rows;
    chunk = std::max(chunk, tile);
    return (chunk + tile - 1) / tile * tile;
}

struct Item {
    int product;
    int64_t row_begin, row_end;
};

// One activation input quantized (or rounded to bf16) for the products that read it so; products
// that share x and its format (q, k and v; gate and up) share it.
struct QuantizedInput {
    const float* x = nullptr;
    int64_t ldx = 0, k = 0;
    Input format = Input::Blocks;
    std::vector<int8_t> q;
    std::vector<float> d, d_sum;
    std::vector<int32_t> half_sums;
    std::vector<int16_t> sums, sums32;
    std::vector<uint32_t> pairs;

    uint64_t serial = 0;  // QuantizedRows::serial, SuperblockRows::serial

    QuantizedRows rows() const { return {q.data(), d.data(), d_sum.data(), half_sums.data(), k, serial}; }
    SuperblockRows superblocks() const { return {q.data(), d.data(), sums.data(), sums32.data(), k, serial}; }
    Bf16Tiles bf16_tiles() const { return {pairs.data(), k}; }
};

// Activation rows per quantization item: small enough to spread a prefill over the threads, and a
// whole bf16 tile.
constexpr int kQuantizeRowsPerItem = 16;
static_assert(kQuantizeRowsPerItem % kBf16TileRows == 0);

// rows(t0, t1) for activation rows [0, n), spread over the pool when there are many.
template <class Rows>
void for_rows(ThreadPool& pool, int n, Rows rows) {
    if (n <= kQuantizeRowsPerItem) return rows(0, n);
    pool.parallel_for((n + kQuantizeRowsPerItem - 1) / kQuantizeRowsPerItem, [&](int64_t i, int) {
        rows(i * kQuantizeRowsPerItem, std::min<int64_t>(n, (i + 1) * kQuantizeRowsPerItem));
    });
}

void quantize(ThreadPool& pool, const Kernels& kernels, int n, QuantizedInput& in) {
    if (in.format == Input::Bf16Tiles) {
        const int64_t tile_pairs = in.k / 2 * kBf16TileRows;  // a tile's rows' pairs, all steps
        in.pairs.resize(size_t((n + kBf16TileRows - 1) / kBf16TileRows * tile_pairs));
        return for_rows(pool, n, [&](int64_t t0, int64_t t1) {
            kernels.pack_bf16_tiles(in.x + t0 * in.ldx, in.ldx, int(t1 - t0), in.k,
                                    in.pairs.data() + t0 / kBf16TileRows * tile_pairs);
        });
    }
    static std::atomic<uint64_t> quantizations{0};
    in.serial = ++quantizations;
    in.q.resize(size_t(n * in.k));
    if (in.format == Input::Superblocks) {
        const int64_t blocks = in.k / kSuperBlock;
        in.d.resize(size_t(n * blocks));
        in.sums.resize(size_t(n * blocks * 16));
        in.sums32.resize(size_t(n * blocks * 8));
        return for_rows(pool, n, [&](int64_t t0, int64_t t1) {
            kernels.quantize_superblocks(in.x + t0 * in.ldx, in.ldx, int(t1 - t0), in.k, in.q.data() + t0 * in.k,
                                         in.d.data() + t0 * blocks, in.sums.data() + t0 * blocks * 16,
                                         in.sums32.data() + t0 * blocks * 8);
        });
    }
    const int64_t blocks = in.k / kActivationBlock;
    in.d.resize(size_t(n * blocks));
    in.d_sum.resize(size_t(n * blocks));
    in.half_sums.resize(size_t(n * blocks * 4));
    for_rows(pool, n, [&](int64_t t0, int64_t t1) {
        kernels.quantize_rows(in.x + t0 * in.ldx, in.ldx, int(t1 - t0), in.k, in.q.data() + t0 * in.k,
                              in.d.data() + t0 * blocks, in.d_sum.data() + t0 * blocks, in.half_sums.data() + t0 * blocks * 4);
    });
}

}  // namespace

void matmuls(ThreadPool& pool, const Kernels& kernels, int n, std::span<const Matmul> products) {
    if (n <= 0) return;
    // Block types read x quantized (and F16, BF16 may read it as bf16 tiles): each distinct input
    // once per call, before the products start.
    // The buffers are kept per calling thread so a decode step allocates nothing.
    thread_local std::vector<QuantizedInput> buffers;
    std::vector<QuantizedInput>& inputs = buffers;  // the workers below must see this thread's buffers
    std::vector<int> input_of(products.size(), -1);
    int n_inputs = 0;
    for (size_t p = 0; p < products.size(); ++p) {
        const Matmul& m = products[p];
        const Input format = input_format(kernels_of(kernels, *m.w), *m.w, n);
        if (format == Input::Floats) continue;
        for (int i = 0; i < n_inputs && input_of[p] < 0; ++i) {
            const QuantizedInput& in = inputs[size_t(i)];
            if (in.x == m.x && in.ldx == m.ldx && in.k == m.w->cols && in.format == format) input_of[p] = i;
        }
        if (input_of[p] >= 0) continue;
        if (size_t(n_inputs) == inputs.size()) inputs.emplace_back();
        QuantizedInput& in = inputs[size_t(n_inputs)];
        in.x = m.x;
        in.ldx = m.ldx;
        in.k = m.w->cols;
        in.format = format;
        quantize(pool, kernels, n, in);
        input_of[p] = n_inputs++;
    }

    std::vector<Item> items;  // a few dozen; building them costs nothing next to the products
    for (size_t p = 0; p < products.size(); ++p) {
        const TensorView& w = *products[p].w;
        const Input format = input_of[p] >= 0 ? inputs[size_t(input_of[p])].format : Input::Floats;
        const int64_t chunk = rows_per_item(kernels, w, n, format, pool.size());
        for (int64_t r = 0; r < w.rows; r += chunk)
            items.push_back({int(p), r, std::min(w.rows, r + chunk)});
    }
    pool.parallel_for(int64_t(items.size()), [&](int64_t i, int) {
        const Item& item = items[size_t(i)];
        const Matmul& m = products[size_t(item.product)];
        const TensorView& w = *m.w;
        const TypeKernels& type = kernels_of(kernels, w);
        const int rows = int(item.row_end - item.row_begin);
        const int input = input_of[size_t(item.product)];
        if (input >= 0 && inputs[size_t(input)].format == Input::Bf16Tiles)
            type.bf16_tile_gemm(inputs[size_t(input)].bf16_tiles(), n, w.row(item.row_begin), w.cols, rows,
                                m.y + item.row_begin, m.ldy);
        else if (input >= 0 && inputs[size_t(input)].format == Input::Superblocks)
            type.superblock_gemm(inputs[size_t(input)].superblocks(), n, w.row(item.row_begin), w.row_bytes(), rows,
                                 m.y + item.row_begin, m.ldy);
        else if (input >= 0)
            type.quantized_gemm(inputs[size_t(input)].rows(), n, w.row(item.row_begin), w.row_bytes(), rows,
                                int(w.cols), m.y + item.row_begin, m.ldy);
        else
            type.gemm(m.x, m.ldx, n, w.row(item.row_begin), w.cols, rows, int(w.cols), m.y + item.row_begin, m.ldy);
    });
}

}  // namespace llamadesk::cpu
