// Built with or without CUDA: only describes shapes.
#include "backends/cuda/cuda_bench_support.h"
#include "model/tensor_slots.h"

namespace llamadesk {

Checkpoint synthetic_shapes(const ModelConfig& c, WeightMix mix) {
    Checkpoint k;
    k.path = "synthetic weights on the GPU";
    k.format = "synthetic";
    k.config = c;
    k.file_type = mix.label();
    // Each matrix in the mix's type for it, norms in F32, as random_model makes them; data stays
    // null: shapes only.
    for (const TensorSlot& s : tensor_slots(c, k.weights, true)) {
        const DType t = mix.type_for(ConstTensorSlot{s.name, s.role, s.layer, s.rows, s.cols}, c.n_layers);
        *s.view = TensorView{s.name, t, s.rows, s.cols, nullptr};
    }
    return k;
}

}  // namespace llamadesk
