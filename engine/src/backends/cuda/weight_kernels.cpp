#include "backends/cuda/weight_kernels.h"

#include <array>

#include "backends/cuda/kernels.h"

namespace llamadesk::cuda {

namespace {

template <DType T>
void plain_gemv(const void* w, const void* x, int rows, int cols, float* y, bool accumulate,
                cudaStream_t stream) {
    gemv(w, x, T, rows, cols, y, accumulate, stream);
}

template <DType T>
void plain_embed(const int32_t* tokens, int n, const void* table, int vocab, int cols, float* x,
                 cudaStream_t stream) {
    embedding_lookup(tokens, n, table, T, vocab, cols, x, stream);
}

template <DType T> constexpr WeightKernels plain_row() { return {T, plain_gemv<T>, nullptr, plain_embed<T>}; }

// In DType order, as model/weight_types.cpp.
constexpr std::array<WeightKernels, kDTypeCount> kKernels = {{
    plain_row<DType::F32>(),
    plain_row<DType::F16>(),
    plain_row<DType::BF16>(),
    {DType::Q8_0, gemv_q8_0, to_f16_q8_0, embed_q8_0},
    {DType::Q4_0, gemv_q4_0, to_f16_q4_0, embed_q4_0},
    {DType::Q4_1, gemv_q4_1, to_f16_q4_1, embed_q4_1},
    {DType::Q5_0, gemv_q5_0, to_f16_q5_0, embed_q5_0},
    {DType::Q5_1, gemv_q5_1, to_f16_q5_1, embed_q5_1},
    {DType::Q4_K, gemv_q4_k, to_f16_q4_k, embed_q4_k},
    {DType::Q5_K, gemv_q5_k, to_f16_q5_k, embed_q5_k},
    {DType::Q6_K, gemv_q6_k, to_f16_q6_k, embed_q6_k},
}};

constexpr bool in_dtype_order() {
    for (int i = 0; i < kDTypeCount; ++i)
        if (int(kKernels[size_t(i)].dtype) != i) return false;
    return true;
}
static_assert(in_dtype_order(), "kKernels must list the types in DType order");

}  // namespace

const WeightKernels& weight_kernels(DType dtype) { return kKernels[size_t(dtype)]; }

}  // namespace llamadesk::cuda
