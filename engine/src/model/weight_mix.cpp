#include "model/weight_mix.h"

#include <cctype>

#include "model/weight_types.h"

namespace llamadesk {

namespace {

// llama.cpp gives the "_M" recipes' extra bits to the first and last eighth of the layers and to
// every third layer in between.
bool more_bits(int layer, int n_layers) {
    return layer < n_layers / 8 || layer >= 7 * n_layers / 8 || (layer - n_layers / 8) % 3 == 2;
}

DType fallback(DType t) {
    switch (t) {
    case DType::Q4_K: return DType::Q5_0;
    case DType::Q5_K: return DType::Q5_1;
    case DType::Q6_K: return DType::Q8_0;
    default: return DType::F16;
    }
}

std::string upper(std::string s) {
    for (char& c : s) c = char(std::toupper(static_cast<unsigned char>(c)));
    return s;
}

}  // namespace

std::optional<WeightMix> WeightMix::parse(std::string_view name) {
    std::string n(name);
    for (char& c : n) c = char(std::tolower(static_cast<unsigned char>(c)));
    WeightMix mix;
    if (n == "q4_k_m" || n == "q5_k_m") {
        mix.medium = true;
        n.resize(4);
    }
    const WeightType* t = weight_type_by_name(n);
    if (t == nullptr) return std::nullopt;
    mix.base = t->dtype;
    return mix;
}

std::string WeightMix::names() { return weight_type_names() + ", q4_k_m, q5_k_m"; }

std::string WeightMix::label() const {
    const std::string name = upper(dtype_name(base));
    if (medium) return name + "_M";
    return base == DType::Q4_K || base == DType::Q5_K ? "" : name;
}

DType WeightMix::type_for(const ConstTensorSlot& slot, int n_layers) const {
    if (slot.is_norm()) return DType::F32;
    DType t = base;
    if (medium) {
        const bool value_or_down = slot.role == TensorRole::Value || slot.role == TensorRole::FfnDown;
        if (slot.role == TensorRole::Output || (value_or_down && more_bits(slot.layer, n_layers))) t = DType::Q6_K;
    }
    while (slot.cols % weight_type(t).block_elements != 0) t = fallback(t);
    return t;
}

}  // namespace llamadesk
