#include "synthetic/widen.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "core/error.h"
#include "model/tensor_slots.h"
#include "readers/checkpoint_storage.h"

namespace llamadesk {

namespace {

// A copy of ckpt's metadata with the given config; tensors are filled in by the caller.
Checkpoint same_model(const Checkpoint& ckpt, const ModelConfig& config) {
    Checkpoint out;
    out.path = ckpt.path;
    out.format = ckpt.format;
    out.config = config;
    out.tokenizer = ckpt.tokenizer;
    out.chat_template = ckpt.chat_template;
    out.name = ckpt.name;
    return out;
}

}  // namespace

Checkpoint widen_checkpoint(const Checkpoint& ckpt, int new_dim, int new_hidden) {
    const ModelConfig& c = ckpt.config;
    const int head_dim = c.head_dim();
    if (new_dim < c.dim || new_hidden < c.hidden_dim || new_dim % head_dim != 0 ||
        (new_dim / head_dim) % c.n_rep() != 0)
        fail(ErrorCode::InvalidArgument,
             "cannot widen dim " + std::to_string(c.dim) + ", hidden " + std::to_string(c.hidden_dim) + " to " +
                 std::to_string(new_dim) + ", " + std::to_string(new_hidden) +
                 ": neither may shrink, and the new dim must be whole heads of " + std::to_string(head_dim) +
                 " in groups of " + std::to_string(c.n_rep()) + " query heads per kv head");
    ModelConfig w = c;
    w.dim = new_dim;
    w.hidden_dim = new_hidden;
    w.n_heads = new_dim / head_dim;
    w.n_kv_heads = w.n_heads / c.n_rep();
    w.norm_eps = c.norm_eps * float(c.dim) / float(new_dim);
    const float norm_scale = std::sqrt(float(c.dim) / float(new_dim));

    Checkpoint out = same_model(ckpt, w);
    out.file_type = "F32";
    auto storage = std::make_shared<CheckpointStorage>();
    const bool tied = ckpt.weights.classifier_tied();
    const std::vector<ConstTensorSlot> from = tensor_slots(c, ckpt.weights, !tied);
    const std::vector<TensorSlot> to = tensor_slots(w, out.weights, !tied);
    // Head h keeps rows h * head_dim .. of q/k/v and the same columns of wo, so the original heads
    // and their kv groups keep their indices; every tensor is the original in its top-left corner.
    for (size_t s = 0; s < to.size(); ++s) {
        const TensorView& src = *from[s].view;
        auto* dst = static_cast<float*>(storage->allocate(size_t(to[s].rows * to[s].cols) * sizeof(float)));
        std::memset(dst, 0, size_t(to[s].rows * to[s].cols) * sizeof(float));
        for (int64_t r = 0; r < src.rows; ++r) {
            float* row = dst + r * to[s].cols;
            src.row_to_f32(r, row);
            if (to[s].is_norm())
                for (int64_t i = 0; i < src.cols; ++i) row[i] *= norm_scale;
        }
        *to[s].view = TensorView{to[s].name, DType::F32, to[s].rows, to[s].cols, dst};
    }
    if (tied) out.weights.output = out.weights.token_embedding;
    out.storage = std::move(storage);
    return out;
}

Checkpoint store_in_mix(const Checkpoint& ckpt, WeightMix mix) {
    Checkpoint out = same_model(ckpt, ckpt.config);
    out.file_type = mix.label();
    auto storage = std::make_shared<CheckpointStorage>();
    const bool tied = ckpt.weights.classifier_tied();
    const std::vector<ConstTensorSlot> from = tensor_slots(ckpt.config, ckpt.weights, !tied);
    const std::vector<TensorSlot> to = tensor_slots(ckpt.config, out.weights, !tied);
    std::vector<float> row;
    for (size_t s = 0; s < to.size(); ++s) {
        const TensorView& src = *from[s].view;
        const WeightType& type = weight_type(mix.type_for(from[s], ckpt.config.n_layers));
        const int64_t row_bytes = type.bytes(src.cols);
        auto* dst = static_cast<char*>(storage->allocate(size_t(src.rows * row_bytes)));
        row.resize(size_t(src.cols));
        for (int64_t r = 0; r < src.rows; ++r) {
            src.row_to_f32(r, row.data());
            type.from_f32(row.data(), dst + r * row_bytes, src.cols);
        }
        *to[s].view = TensorView{to[s].name, type.dtype, src.rows, src.cols, dst};
    }
    if (tied) out.weights.output = out.weights.token_embedding;
    out.storage = std::move(storage);
    return out;
}

}  // namespace llamadesk
