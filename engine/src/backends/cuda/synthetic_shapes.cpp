// Built with or without CUDA: only describes shapes.
#include "backends/cuda/cuda_bench_support.h"

namespace llamadesk {

Checkpoint synthetic_shapes(const ModelConfig& c, DType dtype) {
    auto tensor = [](std::string name, DType t, int64_t rows, int64_t cols) {
        TensorView v;
        v.name = std::move(name);
        v.dtype = t;
        v.rows = rows;
        v.cols = cols;
        return v;  // data stays null: shapes only
    };
    const int64_t q_dim = int64_t(c.n_heads) * c.head_dim(), kv_dim = c.kv_dim();
    Checkpoint k;
    k.path = "synthetic weights on the GPU";
    k.format = "synthetic";
    k.config = c;
    k.weight_dtype = dtype;
    k.weights.token_embedding = tensor("token_embedding", dtype, c.vocab_size, c.dim);
    for (int i = 0; i < c.n_layers; ++i) {
        const std::string p = "layers." + std::to_string(i) + ".";
        LayerWeights l;
        l.attention_norm = tensor(p + "attention_norm", DType::F32, 1, c.dim);
        l.wq = tensor(p + "wq", dtype, q_dim, c.dim);
        l.wk = tensor(p + "wk", dtype, kv_dim, c.dim);
        l.wv = tensor(p + "wv", dtype, kv_dim, c.dim);
        l.wo = tensor(p + "wo", dtype, c.dim, q_dim);
        l.ffn_norm = tensor(p + "ffn_norm", DType::F32, 1, c.dim);
        l.w1 = tensor(p + "w1", dtype, c.hidden_dim, c.dim);
        l.w2 = tensor(p + "w2", dtype, c.dim, c.hidden_dim);
        l.w3 = tensor(p + "w3", dtype, c.hidden_dim, c.dim);
        k.weights.layers.push_back(std::move(l));
    }
    k.weights.final_norm = tensor("final_norm", DType::F32, 1, c.dim);
    k.weights.output = tensor("output", dtype, c.vocab_size, c.dim);
    return k;
}

}  // namespace llamadesk
