#include "model/tensor_slots.h"

namespace llamadesk {

namespace {

// Weights is ModelWeights or const ModelWeights; Slot the matching TensorSlot or ConstTensorSlot.
template <typename Slot, typename Weights>
std::vector<Slot> list_slots(const ModelConfig& c, Weights& w, bool with_output) {
    using R = TensorRole;
    const int64_t dim = c.dim, hidden = c.hidden_dim, vocab = c.vocab_size;
    const int64_t q_dim = int64_t(c.n_heads) * c.head_dim();
    const int64_t kv_dim = int64_t(c.n_kv_heads) * c.head_dim();

    std::vector<Slot> slots;
    slots.push_back({"token_embd.weight", R::TokenEmbedding, -1, vocab, dim, &w.token_embedding});
    for (int l = 0; l < int(w.layers.size()); ++l) {
        auto& lw = w.layers[size_t(l)];
        slots.push_back({layer_tensor_name(l, "attn_norm"), R::AttentionNorm, l, 1, dim, &lw.attention_norm});
        slots.push_back({layer_tensor_name(l, "attn_q"), R::Query, l, q_dim, dim, &lw.wq});
        slots.push_back({layer_tensor_name(l, "attn_k"), R::Key, l, kv_dim, dim, &lw.wk});
        slots.push_back({layer_tensor_name(l, "attn_v"), R::Value, l, kv_dim, dim, &lw.wv});
        slots.push_back({layer_tensor_name(l, "attn_output"), R::AttentionOutput, l, dim, q_dim, &lw.wo});
        slots.push_back({layer_tensor_name(l, "ffn_norm"), R::FfnNorm, l, 1, dim, &lw.ffn_norm});
        slots.push_back({layer_tensor_name(l, "ffn_gate"), R::FfnGate, l, hidden, dim, &lw.w1});
        slots.push_back({layer_tensor_name(l, "ffn_down"), R::FfnDown, l, dim, hidden, &lw.w2});
        slots.push_back({layer_tensor_name(l, "ffn_up"), R::FfnUp, l, hidden, dim, &lw.w3});
    }
    slots.push_back({"output_norm.weight", R::OutputNorm, -1, 1, dim, &w.final_norm});
    if (with_output) slots.push_back({"output.weight", R::Output, -1, vocab, dim, &w.output});
    return slots;
}

}  // namespace

std::string layer_tensor_name(int layer, const char* part) {
    return "blk." + std::to_string(layer) + "." + part + ".weight";
}

std::vector<TensorSlot> tensor_slots(const ModelConfig& c, ModelWeights& w, bool with_output) {
    w.layers.resize(size_t(c.n_layers));
    return list_slots<TensorSlot>(c, w, with_output);
}

std::vector<ConstTensorSlot> tensor_slots(const ModelConfig& c, const ModelWeights& w,
                                          bool with_output) {
    return list_slots<ConstTensorSlot>(c, w, with_output);
}

}  // namespace llamadesk
