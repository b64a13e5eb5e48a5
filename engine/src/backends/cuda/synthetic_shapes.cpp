// Built with or without CUDA: only describes shapes.
#include "backends/cuda/cuda_bench_support.h"
#include "model/tensor_slots.h"

namespace llamadesk {

Checkpoint synthetic_shapes(const ModelConfig& c, DType dtype) {
    Checkpoint k;
    k.path = "synthetic weights on the GPU";
    k.format = "synthetic";
    k.config = c;
    // Matrices in dtype, norms in F32, as random_model makes them; data stays null: shapes only.
    for (const TensorSlot& s : tensor_slots(c, k.weights, true))
        *s.view = TensorView{s.name, s.is_norm() ? DType::F32 : dtype, s.rows, s.cols, nullptr};
    return k;
}

}  // namespace llamadesk
