// One row per element type: how it is stored and how it converts to and from F32. Readers, the
// weight checks, writers, both backends, the bench and the inspector ask this table; a backend's
// kernels for a type live in that backend's own table, indexed by the same DType. Adding a type is
// one file in quant/ and one row here (plus a row in each backend's kernel table).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "model/dtype.h"

namespace llamadesk {

struct WeightType {
    DType dtype;
    const char* name;       // "f16", "q4_k": what the CLI, the bench and the window say
    uint32_t ggml_id;       // GGML's type id in GGUF files
    int block_elements;     // 1 for plain floats
    int block_bytes;
    // Byte offsets in a block of its f16 scales (-1: none), which decide whether a block's values
    // are finite: the rest of a block is small integers.
    int16_t f16_scales[2];
    // dst[0..n) = the n elements at src; n is a multiple of block_elements.
    void (*to_f32)(const void* src, float* dst, int64_t n);
    // Stores src[0..n) in this type: rounding for floats, the reference quantizer for blocks.
    void (*from_f32)(const float* src, void* dst, int64_t n);

    bool quantized() const { return block_elements > 1; }
    // Bytes of `elements` consecutive elements; elements must be a multiple of block_elements.
    int64_t bytes(int64_t elements) const { return elements / block_elements * block_bytes; }
    double bits_per_weight() const { return 8.0 * block_bytes / block_elements; }
};

const WeightType& weight_type(DType t);
std::span<const WeightType> weight_types();
const WeightType* weight_type_by_ggml_id(uint32_t id);
// By name ("q4_k", "Q4_K", "f16"), or nullptr.
const WeightType* weight_type_by_name(std::string_view name);
// "f32, f16, bf16, q8_0, ..." for messages that list what is accepted.
std::string weight_type_names();

inline const char* dtype_name(DType t) { return weight_type(t).name; }

// Element i of a row as F32, however the row is stored (slow path: tests, references).
float load_as_f32(const void* row, DType t, int64_t i);

}  // namespace llamadesk
