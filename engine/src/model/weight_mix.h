// Which type each matrix of a model gets when the project writes one (synthetic models, quantized
// copies for tests and the bench): one type everywhere ("q8_0", as llama.cpp's --pure writes; its
// default Q4_0/Q4_1/Q5_0/Q5_1 files give the classifier Q6_K), or llama.cpp's "_M" mixes
// ("q4_k_m": Q6_K for the classifier and for attn_v and ffn_down on some layers; test_weight_types
// checks the 7B layer pattern). A matrix whose rows do not fit the type's block falls back as
// llama.cpp does (Q4_K to Q5_0, Q5_K to Q5_1, Q6_K to Q8_0, and F16 when even 32 does not fit).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "model/tensor_slots.h"

namespace llamadesk {

struct WeightMix {
    DType base = DType::F32;
    bool medium = false;  // the "_M" recipe of K-quants

    WeightMix() = default;
    WeightMix(DType t) : base(t) {}  // NOLINT: one type everywhere is the common case

    // "f16", "q8_0", "q4_k", "q4_k_m", "q5_k_m" (any case), or nullopt.
    static std::optional<WeightMix> parse(std::string_view name);
    // The names parse() accepts, for messages.
    static std::string names();

    // llama.cpp's general.file_type label: "Q4_K_M", "F16"; empty when it has none (Q4_K alone).
    std::string label() const;
    // The type of a matrix; norms stay F32.
    DType type_for(const ConstTensorSlot& slot, int n_layers) const;
};

}  // namespace llamadesk
