#include "model/checkpoint.h"

namespace llamadesk {

int64_t Checkpoint::n_params() const {
    const ModelWeights& w = weights;
    int64_t n = w.token_embedding.n_elements() + w.final_norm.n_elements();
    for (const LayerWeights& l : w.layers)
        n += l.attention_norm.n_elements() + l.wq.n_elements() + l.wk.n_elements() +
             l.wv.n_elements() + l.wo.n_elements() + l.ffn_norm.n_elements() +
             l.w1.n_elements() + l.w2.n_elements() + l.w3.n_elements();
    if (w.output.data != w.token_embedding.data) n += w.output.n_elements();
    return n;
}

std::string TokenizerSource::describe() const {
    if (!model_file.empty()) return "SentencePiece model " + model_file;
    if (embedded)
        return "vocabulary embedded in the checkpoint (" + std::to_string(embedded->tokens.size()) +
               " tokens, model '" + embedded->model + "')";
    return "none";
}

}  // namespace llamadesk
