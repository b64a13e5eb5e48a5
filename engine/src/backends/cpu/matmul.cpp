#include "backends/cpu/matmul.h"

#include <algorithm>
#include <vector>

namespace llamadesk::cpu {

namespace {

GemmFn gemm_for(const Kernels& kernels, DType dtype) {
    switch (dtype) {
    case DType::F32: return kernels.gemm_f32;
    case DType::F16: return kernels.gemm_f16;
    case DType::BF16: return kernels.gemm_bf16;
    }
    return nullptr;
}

// Activation rows per pass over a weight slice: enough to reuse each weight tile many times, few
// enough that those rows of x stay in L2 (about 192 KiB of them).
int token_block(int64_t k) {
    const int64_t rows = (192 * 1024) / (k * int64_t(sizeof(float)));
    return int(std::clamp<int64_t>(rows / 4 * 4, 4, 64));
}

// Weight rows per work item: about 8 items per thread so uneven threads even out, a multiple of
// the kernel's tile, and for prefill small enough to stay in L2 across token blocks.
int64_t rows_per_item(const Kernels& kernels, int64_t rows, int64_t k, int n, int n_threads) {
    int64_t chunk = rows / (int64_t(n_threads) * 8);
    if (n > 1) chunk = std::min<int64_t>(chunk, std::max<int64_t>(1, (128 * 1024) / (k * 4)));
    chunk = std::max<int64_t>(chunk, kernels.tile_rows);
    return (chunk + kernels.tile_rows - 1) / kernels.tile_rows * kernels.tile_rows;
}

struct Item {
    int product;
    int64_t row_begin, row_end;
};

}  // namespace

void matmuls(ThreadPool& pool, const Kernels& kernels, int n, std::span<const Matmul> products) {
    if (n <= 0) return;
    std::vector<Item> items;  // a few dozen; building them costs nothing next to the products
    for (size_t p = 0; p < products.size(); ++p) {
        const TensorView& w = *products[p].w;
        const int64_t chunk = rows_per_item(kernels, w.rows, w.cols, n, pool.size());
        for (int64_t r = 0; r < w.rows; r += chunk)
            items.push_back({int(p), r, std::min(w.rows, r + chunk)});
    }
    pool.parallel_for(int64_t(items.size()), [&](int64_t i, int) {
        const Item& item = items[size_t(i)];
        const Matmul& m = products[size_t(item.product)];
        const TensorView& w = *m.w;
        const GemmFn gemm = gemm_for(kernels, w.dtype);
        const int block = token_block(w.cols);
        for (int t = 0; t < n; t += block)
            gemm(m.x + t * m.ldx, m.ldx, std::min(block, n - t), w.row(item.row_begin), w.cols,
                 int(item.row_end - item.row_begin), int(w.cols), m.y + t * m.ldy + item.row_begin, m.ldy);
    });
}

}  // namespace llamadesk::cpu
