#include "model/checkpoint.h"

#include "model/tensor_slots.h"

namespace llamadesk {

int64_t Checkpoint::n_params() const {
    int64_t n = 0;
    for (const ConstTensorSlot& s : tensor_slots(config, weights, !weights.classifier_tied()))
        n += s.view->n_elements();
    return n;
}

int64_t Checkpoint::weight_bytes_per_token() const {
    int64_t bytes = 0;
    for (const ConstTensorSlot& s : tensor_slots(config, weights, true))
        if (s.read_whole_per_token()) bytes += s.view->n_bytes();
    return bytes;
}

std::string TokenizerSource::describe() const {
    if (!model_file.empty()) return "SentencePiece model " + model_file;
    if (embedded)
        return "vocabulary embedded in the checkpoint (" + std::to_string(embedded->tokens.size()) +
               " tokens, model '" + embedded->model + "')";
    return "none";
}

}  // namespace llamadesk
