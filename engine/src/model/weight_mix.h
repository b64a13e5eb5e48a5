// Which type each matrix of a model gets when the project writes one (synthetic models, quantized
// copies for tests and the bench), following llama.cpp's quantizer so the files look like the ones
// people download: one type everywhere ("q8_0"), or a "_M" mix ("q4_k_m": Q6_K for the classifier
// and for attn_v and ffn_down on some layers). A matrix whose rows do not fit the type's block falls
// back as llama.cpp does (Q4_K to Q5_0, Q5_K to Q5_1, Q6_K to Q8_0, and F16 when even 32 does not fit).
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
