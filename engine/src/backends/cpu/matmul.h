// Multithreaded y = x W^T over weights used in place: decode (n = 1, a matrix-vector product that
// streams W once) and prefill (n tokens, W tiles reused across tokens). Several independent
// products (q, k and v; gate and up) run as one parallel job so threads never wait in between.
#pragma once

#include <cstdint>
#include <span>

#include "backends/cpu/kernels.h"
#include "backends/cpu/thread_pool.h"
#include "model/checkpoint.h"

namespace llamadesk::cpu {

struct Matmul {
    const float* x;     // (n, w.cols), rows ldx apart
    int64_t ldx;
    const TensorView* w;  // (rows, cols)
    float* y;           // (n, w.rows), rows ldy apart
    int64_t ldy;
};

// Runs every product for n activation rows.
void matmuls(ThreadPool& pool, const Kernels& kernels, int n, std::span<const Matmul> products);

inline void matmul(ThreadPool& pool, const Kernels& kernels, int n, const Matmul& product) {
    matmuls(pool, kernels, n, std::span<const Matmul>(&product, 1));
}

}  // namespace llamadesk::cpu
