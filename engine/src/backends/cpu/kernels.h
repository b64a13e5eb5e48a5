// The CPU backend's inner loops, one set per instruction set: AMX (the AVX-512 VNNI set with tile
// products for prefill), AVX-512 VNNI, AVX-512, AVX2+FMA+F16C and a portable fallback. Each set is compiled in its own file with its own flags (see CMakeLists.txt) and the
// best one the running CPU supports is chosen at run time, so one binary runs everywhere.
//
// This header is included by the per-ISA files, so it includes nothing with inline code: an inline
// function compiled there with AVX-512 flags could be the copy the linker keeps for everyone.
#pragma once

#include <cstdint>
#include <span>

#include "model/dtype_id.h"

namespace llamadesk::cpu {

// y[t * ldy + r] = sum_k x[t * ldx + k] * w[r * ldw + k]   for t < n, r < rows
// x: (n, k) activations; w: (rows, k) weights of one element type, used in place (f16/bf16 are
// widened in registers). Single-threaded; callers split rows across threads.
using GemmFn = void (*)(const float* x, int64_t ldx, int n, const void* w, int64_t ldw, int rows,
                        int k, float* y, int64_t ldy);

// Activation rows quantized per super-block of 256 for the K-quant types (llama.cpp's q8_K):
// x ~ d * q with q in -127..127 and one d per 256, and the sums of q per 16 and per 32 (what Q6_K's
// -32 and the K-quants' mins multiply), so a super-block stays in integers until one float step.
// Row t: q + t * k; d + t * k / 256; sums + t * k / 16; sums32 + t * k / 32.
inline constexpr int kSuperBlock = 256;
struct SuperblockRows {
    const int8_t* q;
    const float* d;
    const int16_t* sums;
    const int16_t* sums32;
    int64_t k;
    uint64_t serial = 0;  // as QuantizedRows::serial

    SuperblockRows from(int64_t t) const {  // the rows from row t on (a view with no serial)
        return {q + t * k, d + t * (k / kSuperBlock), sums + t * (k / 16), sums32 + t * (k / 32), k};
    }
};

// y[t * ldy + r] = x_t . w_r as QuantizedGemmFn, x quantized per super-block; k a multiple of 256.
using SuperblockGemmFn = void (*)(const SuperblockRows& x, int n, const void* w, int64_t ldw, int rows, float* y,
                                  int64_t ldy);

// Activation rows quantized for the block types, once per product: for each block of 32 elements
// x ~ d * q with q in -127..127, d_sum = d * sum(q) (what a weight type's float offset multiplies)
// and half_sums = {sum of q[0..16), 0, sum of q[16..32), 0} (what an integer offset multiplies;
// the zeros let a kernel widen it straight into the two halves of a 256-bit vector).
// Row t: q + t * k; d, d_sum + t * k / 32; half_sums + t * k / 8.
inline constexpr int kActivationBlock = 32;
struct QuantizedRows {
    const int8_t* q;
    const float* d;
    const float* d_sum;
    const int32_t* half_sums;
    int64_t k;
    // Differs between quantizations (0: not said), so that a kernel may keep what it derives from
    // these rows for all the work items of the products that share them.
    uint64_t serial = 0;

    QuantizedRows from(int64_t t) const {  // the rows from row t on (a view with no serial)
        return {q + t * k, d + t * (k / kActivationBlock), d_sum + t * (k / kActivationBlock),
                half_sums + 4 * t * (k / kActivationBlock), k};
    }
};

// y[t * ldy + r] = x_t . w_r as GemmFn, x quantized; w rows are ldw bytes apart, k a multiple of
// the type's block.
using QuantizedGemmFn = void (*)(const QuantizedRows& x, int n, const void* w, int64_t ldw, int rows, int k,
                                 float* y, int64_t ldy);

// Activation rows rounded to bf16 (nearest even) for AMX-BF16 tile products, laid out as the
// tiles' second operand: per tile of 16 rows and step of 32 columns, 16 rows of 16 dwords where
// dword (i, t) holds row t's columns 2i (low half) and 2i + 1. Tile T, step s at
// pairs + (T * k / 32 + s) * 256; rows past the last are zeros.
inline constexpr int kBf16TileRows = 16;
inline constexpr int kBf16Step = 32;
struct Bf16Tiles {
    const uint32_t* pairs;
    int64_t k;
};

// y[t * ldy + r] = x_t . w_r as GemmFn, x as bf16 tiles; k a multiple of 32, ldw in elements.
using Bf16TileGemmFn = void (*)(const Bf16Tiles& x, int n, const void* w, int64_t ldw, int rows, float* y,
                                int64_t ldy);

// out[r * ldo + d] += sum_{j < m} p[r * ldp + j] * v[j * ldv + d]   for r < rows, d < n
// (attention: probabilities times values); v of one float type (the KV cache's), widened in registers.
using WeightedRowsFn = void (*)(const float* p, int64_t ldp, int rows, const void* v, int64_t ldv, int m, int n,
                                float* out, int64_t ldo);

// The kernels of one element type: plain floats read x as F32 (gemm), block types read it quantized
// (quantized_gemm); exactly one of the two is set. Float types also weight values (weighted_rows),
// which is how attention reads a KV cache of that type. K-quant types may also take activations
// quantized per super-block (superblock_gemm), which is used for up to superblock_max_tokens rows.
// F16 and BF16 may take bf16 tiles (bf16_tile_gemm) from kBf16TileMinTokens rows on.
struct TypeKernels {
    GemmFn gemm;
    QuantizedGemmFn quantized_gemm;
    WeightedRowsFn weighted_rows;
    SuperblockGemmFn superblock_gemm;
    int superblock_max_tokens;  // with superblock_gemm: up to this many rows (more take quantized_gemm)
    int prefill_item_rows;      // weight rows per thread's work item in a prefill; 0: a slice that stays in L2
    Bf16TileGemmFn bf16_tile_gemm;
};
inline constexpr int kBf16TileMinTokens = 16;  // fewer rows than a tile take gemm
// gemm's float panels from this many activation rows; its tiles below (float_panels.h says why)
inline constexpr int kFloatPanelMinTokens = 32;

// A type's kernels on weights regrouped at load so that lane r of each vector is row r of a group
// of Kernels::interleave_rows rows (llama.cpp's repack), and how a group is made.
struct InterleavedKernels {
    TypeKernels on_groups;  // quantized_gemm, superblock_gemm; w is a group, rows whole groups
    // The interleave_rows rows at w (ldw bytes apart, k columns) into one group at out, of the same
    // bytes. Null where the type has no such layout in this set.
    void (*interleave)(const void* w, int64_t ldw, int64_t k, void* out);
    // Row r (< interleave_rows) of the group at group back into plain blocks at row (a tied token
    // embedding's lookup).
    void (*deinterleave_row)(const void* group, int r, int64_t k, void* row);
};

// What softmax divided by: x became exp(x - max) / sum. Attention merges the parts of a long
// context with it.
struct SoftmaxScale {
    float max, sum;
};

struct Kernels {
    const char* isa;  // one of kernel_set_names()
    int tile_rows;        // weight rows one micro-kernel covers; row splits are multiples of it
    int block_tile_rows;  // the same for block types (a prefill panel's rows)

    TypeKernels types[kDTypeCount];  // indexed by DType
    int interleave_rows;  // rows of an interleaved group (a multiple of block_tile_rows); 0: none
    InterleavedKernels interleaved[kDTypeCount];  // indexed by DType

    // Rows x (n, k), ldx apart, into q (n, k), d and d_sum (n, k / 32), half_sums (n, k / 8); k a
    // multiple of 32.
    void (*quantize_rows)(const float* x, int64_t ldx, int n, int64_t k, int8_t* q, float* d, float* d_sum,
                          int32_t* half_sums);
    // Rows x (n, k), ldx apart, into rows (n, k) as SuperblockRows lays them out; k a multiple of
    // 256. Null where no type has a superblock_gemm.
    void (*quantize_superblocks)(const float* x, int64_t ldx, int n, int64_t k, int8_t* q, float* d, int16_t* sums,
                                 int16_t* sums32);

    // Rows x (n, k), ldx apart, into bf16 tiles at pairs as Bf16Tiles lays them out (whole tiles,
    // zeros past row n); k a multiple of 32. Null where no type has a bf16_tile_gemm.
    void (*pack_bf16_tiles)(const float* x, int64_t ldx, int n, int64_t k, uint32_t* pairs);

    // For the kernel bench's fraction of peak: `iterations` steps of a loop of independent products
    // of the instruction this set's kernels multiply with (Int8: the block types' dpbusd, maddubs or
    // tile product; Bf16: the float types' bf16 tile product where the set has one, else as Float;
    // Float: FMAs), with nothing else; returns the multiply-adds done.
    enum class Multiply { Float, Int8, Bf16 };
    uint64_t (*peak_probe)(Multiply multiply, int64_t iterations);

    // y[0..n) = x[0..n) rounded to f16 (round to nearest even), for writing an f16 KV cache
    void (*to_f16)(const float* x, uint16_t* y, int64_t n);
    // x[0..n) = softmax(x[0..n)), n >= 1; returns the max and the sum of exp(x - max) it divided by
    SoftmaxScale (*softmax)(float* x, int n);
    // gate[i] = silu(gate[i]) * up[i]   (SwiGLU)
    void (*swiglu)(float* gate, const float* up, int64_t n);
    // sum_i x[i]^2
    float (*sum_squares)(const float* x, int n);
};

// The names of every kernel set, fastest first: "amx", "avx512vnni", "avx512", "avx2", "generic".
std::span<const char* const> kernel_set_names();

// The set named isa, or nullptr when this build or this CPU lacks it.
const Kernels* kernels_for(const char* isa);

// The fastest set this CPU runs.
const Kernels& best_kernels();

// The set the CPU backend uses: the one the environment variable LLAMADESK_ISA names (one switch for
// the CLI, the bench, the tests and the window), else best_kernels(). Fails with InvalidArgument,
// naming the sets this CPU runs, when LLAMADESK_ISA names one this CPU or build lacks.
const Kernels& chosen_kernels();

}  // namespace llamadesk::cpu
