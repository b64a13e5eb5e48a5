// write_llama2c(): the legacy llama2.c layout of run.c (header of 7 int32, then fp32 weights).
#include <cmath>
#include <unordered_map>

#include "core/error.h"
#include "model/tensor_slots.h"
#include "readers/llama2c_reader.h"
#include "synthetic/file_sink.h"
#include "synthetic/synthetic_model.h"

namespace llamadesk {

void write_llama2c(const Checkpoint& ckpt, const std::string& path) {
    const ModelConfig& c = ckpt.config;
    ModelWeights weights = ckpt.weights;
    const bool tied = weights.output.data == weights.token_embedding.data;
    std::unordered_map<std::string, const TensorView*> by_name;
    for (const TensorSlot& s : tensor_slots(c, weights, !tied)) {
        if (s.view->dtype != DType::F32)
            fail(ErrorCode::Unsupported, "llama2.c checkpoints hold only f32 weights; " + s.name +
                                             " is " + dtype_name(s.view->dtype));
        by_name[s.name] = s.view;
    }

    FileSink out(path);
    // A negative vocab_size tells readers the classifier is stored after the other weights.
    for (int32_t v : {c.dim, c.hidden_dim, c.n_layers, c.n_heads, c.n_kv_heads,
                      tied ? c.vocab_size : -c.vocab_size, c.seq_len})
        out.put<int32_t>(v);
    auto put_tensor = [&](const std::string& name) {
        const TensorView* t = by_name.at(name);
        out.write(t->data, size_t(t->n_bytes()));
    };
    for (const std::string& group : llama2c_file_order(0, tied)) {
        if (group == "freq_cis") {
            // Old run.c versions read RoPE from this table; current ones skip it.
            const int half = c.head_dim() / 2;
            for (const bool imag : {false, true})
                for (int pos = 0; pos < c.seq_len; ++pos)
                    for (int i = 0; i < half; ++i) {
                        const float angle = float(pos) * std::pow(c.rope_theta, -float(2 * i) / float(c.head_dim()));
                        out.put<float>(imag ? std::sin(angle) : std::cos(angle));
                    }
        } else if (group.find('.') != std::string::npos) {
            put_tensor(group);
        } else {
            for (int l = 0; l < c.n_layers; ++l) put_tensor(layer_tensor_name(l, group.c_str()));
        }
    }
    out.close();
}

}  // namespace llamadesk
