// The CPU backend's inner loops, one set per instruction set: AVX-512, AVX2+FMA+F16C and a portable
// fallback. Each set is compiled in its own file with its own flags (see CMakeLists.txt) and the
// best one the running CPU supports is chosen at run time, so one binary runs everywhere.
//
// This header is included by the per-ISA files, so it includes nothing with inline code: an inline
// function compiled there with AVX-512 flags could be the copy the linker keeps for everyone.
#pragma once

#include <cstdint>

namespace llamadesk::cpu {

// y[t * ldy + r] = sum_k x[t * ldx + k] * w[r * ldw + k]   for t < n, r < rows
// x: (n, k) activations; w: (rows, k) weights of one element type, used in place (f16/bf16 are
// widened in registers). Single-threaded; callers split rows across threads.
using GemmFn = void (*)(const float* x, int64_t ldx, int n, const void* w, int64_t ldw, int rows,
                        int k, float* y, int64_t ldy);

struct Kernels {
    const char* isa;  // "avx512", "avx2", "generic"
    int tile_rows;    // weight rows one micro-kernel covers; row splits are multiples of it

    GemmFn gemm_f32;
    GemmFn gemm_f16;
    GemmFn gemm_bf16;

    // out[r * ldo + d] += sum_{j < m} p[r * ldp + j] * v[j * ldv + d]   for r < rows, d < n
    // (attention: probabilities times values)
    void (*weighted_rows)(const float* p, int64_t ldp, int rows, const float* v, int64_t ldv, int m, int n,
                          float* out, int64_t ldo);
    // x[0..n) = softmax(x[0..n)), n >= 1
    void (*softmax)(float* x, int n);
    // gate[i] = silu(gate[i]) * up[i]   (SwiGLU)
    void (*swiglu)(float* gate, const float* up, int64_t n);
    // sum_i x[i]^2
    float (*sum_squares)(const float* x, int n);
};

// The set named isa ("avx512", "avx2", "generic"), or nullptr when this build or this CPU lacks it.
const Kernels* kernels_for(const char* isa);

// The fastest set this CPU runs.
const Kernels& best_kernels();

}  // namespace llamadesk::cpu
