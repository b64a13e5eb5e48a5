#include "model/tensor_slots.h"

namespace llamadesk {

std::string layer_tensor_name(int layer, const char* part) {
    return "blk." + std::to_string(layer) + "." + part + ".weight";
}

std::vector<TensorSlot> tensor_slots(const ModelConfig& c, ModelWeights& w, bool with_output) {
    const int64_t dim = c.dim, hidden = c.hidden_dim, vocab = c.vocab_size;
    const int64_t q_dim = int64_t(c.n_heads) * c.head_dim();
    const int64_t kv_dim = int64_t(c.n_kv_heads) * c.head_dim();
    w.layers.resize(size_t(c.n_layers));

    std::vector<TensorSlot> slots;
    slots.push_back({"token_embd.weight", vocab, dim, false, &w.token_embedding});
    for (int l = 0; l < c.n_layers; ++l) {
        LayerWeights& lw = w.layers[size_t(l)];
        slots.push_back({layer_tensor_name(l, "attn_norm"), 1, dim, true, &lw.attention_norm});
        slots.push_back({layer_tensor_name(l, "attn_q"), q_dim, dim, false, &lw.wq});
        slots.push_back({layer_tensor_name(l, "attn_k"), kv_dim, dim, false, &lw.wk});
        slots.push_back({layer_tensor_name(l, "attn_v"), kv_dim, dim, false, &lw.wv});
        slots.push_back({layer_tensor_name(l, "attn_output"), dim, q_dim, false, &lw.wo});
        slots.push_back({layer_tensor_name(l, "ffn_norm"), 1, dim, true, &lw.ffn_norm});
        slots.push_back({layer_tensor_name(l, "ffn_gate"), hidden, dim, false, &lw.w1});
        slots.push_back({layer_tensor_name(l, "ffn_down"), dim, hidden, false, &lw.w2});
        slots.push_back({layer_tensor_name(l, "ffn_up"), hidden, dim, false, &lw.w3});
    }
    slots.push_back({"output_norm.weight", 1, dim, true, &w.final_norm});
    if (with_output) slots.push_back({"output.weight", vocab, dim, false, &w.output});
    return slots;
}

}  // namespace llamadesk
