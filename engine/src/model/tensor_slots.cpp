#include "model/tensor_slots.h"

namespace llamadesk {

namespace {

struct RoleNames {
    TensorRole role;
    const char* gguf;  // per-layer roles: the part after "blk.N."
    const char* hf;    // after "model.layers.N."
    const char* meta;  // after "layers.N."
};

// In TensorRole order.
constexpr RoleNames kNames[] = {
    {TensorRole::TokenEmbedding, "token_embd", "model.embed_tokens", "tok_embeddings"},
    {TensorRole::AttentionNorm, "attn_norm", "input_layernorm", "attention_norm"},
    {TensorRole::Query, "attn_q", "self_attn.q_proj", "attention.wq"},
    {TensorRole::Key, "attn_k", "self_attn.k_proj", "attention.wk"},
    {TensorRole::Value, "attn_v", "self_attn.v_proj", "attention.wv"},
    {TensorRole::AttentionOutput, "attn_output", "self_attn.o_proj", "attention.wo"},
    {TensorRole::FfnNorm, "ffn_norm", "post_attention_layernorm", "ffn_norm"},
    {TensorRole::FfnGate, "ffn_gate", "mlp.gate_proj", "feed_forward.w1"},
    {TensorRole::FfnDown, "ffn_down", "mlp.down_proj", "feed_forward.w2"},
    {TensorRole::FfnUp, "ffn_up", "mlp.up_proj", "feed_forward.w3"},
    {TensorRole::OutputNorm, "output_norm", "model.norm", "norm"},
    {TensorRole::Output, "output", "lm_head", "output"},
};

bool per_layer(TensorRole r) {
    return r != TensorRole::TokenEmbedding && r != TensorRole::OutputNorm && r != TensorRole::Output;
}

// Weights is ModelWeights or const ModelWeights; Slot the matching TensorSlot or ConstTensorSlot.
template <typename Slot, typename Weights>
std::vector<Slot> list_slots(const ModelConfig& c, Weights& w, bool with_output) {
    using R = TensorRole;
    const int64_t dim = c.dim, hidden = c.hidden_dim, vocab = c.vocab_size;
    const int64_t q_dim = int64_t(c.n_heads) * c.head_dim();
    const int64_t kv_dim = int64_t(c.n_kv_heads) * c.head_dim();

    std::vector<Slot> slots;
    auto add = [&](TensorRole role, int layer, int64_t rows, int64_t cols, auto* view) {
        slots.push_back({tensor_name(role, layer, TensorNaming::Gguf), role, layer, rows, cols, view});
    };
    add(R::TokenEmbedding, -1, vocab, dim, &w.token_embedding);
    for (int l = 0; l < int(w.layers.size()); ++l) {
        auto& lw = w.layers[size_t(l)];
        add(R::AttentionNorm, l, 1, dim, &lw.attention_norm);
        add(R::Query, l, q_dim, dim, &lw.wq);
        add(R::Key, l, kv_dim, dim, &lw.wk);
        add(R::Value, l, kv_dim, dim, &lw.wv);
        add(R::AttentionOutput, l, dim, q_dim, &lw.wo);
        add(R::FfnNorm, l, 1, dim, &lw.ffn_norm);
        add(R::FfnGate, l, hidden, dim, &lw.w1);
        add(R::FfnDown, l, dim, hidden, &lw.w2);
        add(R::FfnUp, l, hidden, dim, &lw.w3);
    }
    add(R::OutputNorm, -1, 1, dim, &w.final_norm);
    if (with_output) add(R::Output, -1, vocab, dim, &w.output);
    return slots;
}

}  // namespace

std::string layer_tensor_name(int layer, const char* part) {
    return "blk." + std::to_string(layer) + "." + part + ".weight";
}

std::string tensor_name(TensorRole role, int layer, TensorNaming naming) {
    const RoleNames& n = kNames[size_t(role)];
    const char* part = naming == TensorNaming::Gguf ? n.gguf : naming == TensorNaming::HuggingFace ? n.hf : n.meta;
    if (!per_layer(role)) return std::string(part) + ".weight";
    const char* prefix = naming == TensorNaming::Gguf ? "blk." : naming == TensorNaming::HuggingFace ? "model.layers." : "layers.";
    return prefix + std::to_string(layer) + "." + part + ".weight";
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
