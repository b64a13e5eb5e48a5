#include "model/weight_types.h"

#include <array>
#include <cstddef>
#include <cctype>

#include "model/quant/blocks.h"
#include "model/quant/quant.h"

namespace llamadesk {

namespace {

using namespace quant;

// In DType order.
constexpr std::array<WeightType, kDTypeCount> kTypes = {{
    {DType::F32, "f32", 0, 1, 4, {-1, -1},
     to_f32_f32, from_f32_f32},
    {DType::F16, "f16", 1, 1, 2, {-1, -1},
     to_f32_f16, from_f32_f16},
    {DType::BF16, "bf16", 30, 1, 2, {-1, -1},
     to_f32_bf16, from_f32_bf16},
    {DType::Q8_0, "q8_0", 8, kBlock32, sizeof(BlockQ8_0), {offsetof(BlockQ8_0, d), -1},
     to_f32_q8_0, from_f32_q8_0},
    {DType::Q4_0, "q4_0", 2, kBlock32, sizeof(BlockQ4_0), {offsetof(BlockQ4_0, d), -1},
     to_f32_q4_0, from_f32_q4_0},
    {DType::Q4_1, "q4_1", 3, kBlock32, sizeof(BlockQ4_1), {offsetof(BlockQ4_1, d), offsetof(BlockQ4_1, m)},
     to_f32_q4_1, from_f32_q4_1},
    {DType::Q5_0, "q5_0", 6, kBlock32, sizeof(BlockQ5_0), {offsetof(BlockQ5_0, d), -1},
     to_f32_q5_0, from_f32_q5_0},
    {DType::Q5_1, "q5_1", 7, kBlock32, sizeof(BlockQ5_1), {offsetof(BlockQ5_1, d), offsetof(BlockQ5_1, m)},
     to_f32_q5_1, from_f32_q5_1},
    {DType::Q4_K, "q4_k", 12, kBlock256, sizeof(BlockQ4_K), {offsetof(BlockQ4_K, d), offsetof(BlockQ4_K, dmin)},
     to_f32_q4_k, from_f32_q4_k},
    {DType::Q5_K, "q5_k", 13, kBlock256, sizeof(BlockQ5_K), {offsetof(BlockQ5_K, d), offsetof(BlockQ5_K, dmin)},
     to_f32_q5_k, from_f32_q5_k},
    {DType::Q6_K, "q6_k", 14, kBlock256, sizeof(BlockQ6_K), {offsetof(BlockQ6_K, d), -1},
     to_f32_q6_k, from_f32_q6_k},
}};

constexpr bool in_dtype_order() {
    for (int i = 0; i < kDTypeCount; ++i)
        if (int(kTypes[size_t(i)].dtype) != i) return false;
    return true;
}
static_assert(in_dtype_order(), "kTypes must list the types in DType order");

}  // namespace

const WeightType& weight_type(DType t) { return kTypes[size_t(t)]; }

std::span<const WeightType> weight_types() { return kTypes; }

const WeightType* weight_type_by_ggml_id(uint32_t id) {
    for (const WeightType& t : kTypes)
        if (t.ggml_id == id) return &t;
    return nullptr;
}

const WeightType* weight_type_by_name(std::string_view name) {
    for (const WeightType& t : kTypes) {
        const std::string_view n = t.name;
        if (n.size() != name.size()) continue;
        bool same = true;
        for (size_t i = 0; i < n.size() && same; ++i)
            same = n[i] == std::tolower(static_cast<unsigned char>(name[i]));
        if (same) return &t;
    }
    return nullptr;
}

std::string weight_type_names() {
    std::string out;
    for (const WeightType& t : kTypes) out += (out.empty() ? "" : ", ") + std::string(t.name);
    return out;
}

float load_as_f32(const void* row, DType t, int64_t i) {
    const WeightType& w = weight_type(t);
    const int64_t block = i / w.block_elements;
    float values[quant::kBlock256];
    w.to_f32(static_cast<const char*>(row) + block * w.block_bytes, values, w.block_elements);
    return values[i % w.block_elements];
}

}  // namespace llamadesk
