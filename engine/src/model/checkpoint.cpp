#include "model/checkpoint.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "model/tensor_slots.h"

namespace llamadesk {

int64_t Checkpoint::n_params() const {
    int64_t n = 0;
    for (const ConstTensorSlot& s : tensor_slots(config, weights, !weights.classifier_tied()))
        n += s.view->n_elements();
    return n;
}

std::vector<std::pair<DType, int>> Checkpoint::matrix_types() const {
    std::array<int, kDTypeCount> counts{};
    for (const ConstTensorSlot& s : tensor_slots(config, weights, !weights.classifier_tied()))
        if (!s.is_norm()) ++counts[size_t(s.view->dtype)];
    std::vector<std::pair<DType, int>> out;
    for (int t = 0; t < kDTypeCount; ++t)
        if (counts[size_t(t)] > 0) out.emplace_back(DType(t), counts[size_t(t)]);
    return out;
}

DType Checkpoint::main_weight_dtype() const {
    std::array<int64_t, kDTypeCount> bytes{};
    for (const ConstTensorSlot& s : tensor_slots(config, weights, !weights.classifier_tied()))
        if (!s.is_norm()) bytes[size_t(s.view->dtype)] += s.view->n_bytes();
    return DType(std::max_element(bytes.begin(), bytes.end()) - bytes.begin());
}

std::string Checkpoint::describe_weight_types() const {
    std::string out;
    for (const auto& [t, n] : matrix_types()) {
        std::string name = dtype_name(t);
        for (char& c : name) c = char(std::toupper(static_cast<unsigned char>(c)));
        out += (out.empty() ? "" : ", ") + name + " ×" + std::to_string(n);
    }
    const auto types = matrix_types();
    const bool label_says_all = types.size() == 1 && out.rfind(file_type + " ", 0) == 0;
    return file_type.empty() || label_says_all ? out : file_type + ": " + out;
}

int64_t Checkpoint::weight_bytes() const {
    int64_t bytes = 0;
    for (const ConstTensorSlot& s : tensor_slots(config, weights, !weights.classifier_tied()))
        bytes += s.view->n_bytes();
    return bytes;
}

int64_t Checkpoint::weight_bytes_per_token() const {
    int64_t bytes = 0;
    for (const ConstTensorSlot& s : tensor_slots(config, weights, true))
        if (s.read_whole_per_token()) bytes += s.view->n_bytes();
    return bytes;
}

std::string TokenizerSource::describe() const {
    if (!model_file.empty()) return "tokenizer model " + model_file;
    if (embedded)
        return "vocabulary of " + std::to_string(embedded->tokens.size()) + " tokens, model '" +
               embedded->model + "'" + (embedded->pre.empty() ? "" : ", pre '" + embedded->pre + "'");
    return "none";
}

}  // namespace llamadesk
