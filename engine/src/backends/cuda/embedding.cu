// Embedding lookup: one block per token copies (and widens) its row of the table.
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/device_math.cuh"
#include "backends/cuda/kernels.h"

namespace llamadesk::cuda {

template <typename T>
static __global__ void embedding_kernel(const int32_t* __restrict__ tokens,  // (n,)
                                        const T* __restrict__ table,         // (vocab, dim)
                                        int vocab, int dim,
                                        float* __restrict__ x) {             // (n, dim)
    const int i = blockIdx.x;
    int32_t token = tokens[i];
    if (token < 0 || token >= vocab) token = 0;  // the host checked; never read out of bounds
    const T* row = table + int64_t(token) * dim;
    for (int d = threadIdx.x; d < dim; d += blockDim.x) x[int64_t(i) * dim + d] = to_float(row[d]);
}

template <typename T>
static void launch_embedding(const int32_t* tokens, int n, const T* table, int vocab, int dim,
                             float* x, cudaStream_t stream) {
    embedding_kernel<T><<<n, 256, 0, stream>>>(tokens, table, vocab, dim, x);
    CUDA_CHECK_LAUNCH();
}

void embedding_lookup(const int32_t* tokens, int n, const void* table, DType dtype, int vocab,
                      int dim, float* x, cudaStream_t stream) {
    if (n <= 0 || vocab <= 0 || dim <= 0)
        fail(ErrorCode::Internal, "embedding_lookup: empty shape");
    dispatch_dtype(dtype, [&]<typename T>() {
        launch_embedding<T>(tokens, n, static_cast<const T*>(table), vocab, dim, x, stream);
    });
}

}  // namespace llamadesk::cuda
