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
    default: return nullptr;
    }
}

// Block types: widens a few rows at a time and multiplies them as F32.
void gemm_widened(const Kernels& kernels, const Matmul& m, int n, int64_t row_begin, int64_t row_end) {
    const TensorView& w = *m.w;
    const int64_t step = kernels.tile_rows;
    thread_local std::vector<float> rows;
    rows.resize(size_t(step * w.cols));
    for (int64_t r = row_begin; r < row_end; r += step) {
        const int64_t count = std::min(step, row_end - r);
        for (int64_t i = 0; i < count; ++i) w.row_to_f32(r + i, rows.data() + i * w.cols);
        kernels.gemm_f32(m.x, m.ldx, n, rows.data(), w.cols, int(count), int(w.cols), m.y + r, m.ldy);
    }
}

// Weight rows per work item: about 8 items per thread so uneven threads even out, a multiple of
// the kernel's tile, and for prefill at most 128 KiB, so the slice stays in L2 while every slice of
// activation rows passes over it.
int64_t rows_per_item(const Kernels& kernels, const TensorView& w, int n, int n_threads) {
    int64_t chunk = w.rows / (int64_t(n_threads) * 8);
    if (n > 1) chunk = std::min<int64_t>(chunk, std::max<int64_t>(1, (128 * 1024) / w.row_bytes()));
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
        const int64_t chunk = rows_per_item(kernels, w, n, pool.size());
        for (int64_t r = 0; r < w.rows; r += chunk)
            items.push_back({int(p), r, std::min(w.rows, r + chunk)});
    }
    pool.parallel_for(int64_t(items.size()), [&](int64_t i, int) {
        const Item& item = items[size_t(i)];
        const Matmul& m = products[size_t(item.product)];
        const TensorView& w = *m.w;
        if (const GemmFn gemm = gemm_for(kernels, w.dtype))
            gemm(m.x, m.ldx, n, w.row(item.row_begin), w.cols, int(item.row_end - item.row_begin), int(w.cols),
                 m.y + item.row_begin, m.ldy);
        else
            gemm_widened(kernels, m, n, item.row_begin, item.row_end);
    });
}

}  // namespace llamadesk::cpu
