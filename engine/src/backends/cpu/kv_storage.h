// The CPU's KV pool in memory: blocks laid out as kv_layout.h says, in F32, F16 or Q8_0 elements
// (Q8_0: every head_dim row is whole blocks of 32 with their scale).
#pragma once

#include <cstdint>

#include "cache/kv_layout.h"
#include "model/weight_types.h"

namespace llamadesk::cpu {

struct KvStorage {
    void* data = nullptr;
    DType dtype = DType::F16;
    KvLayout layout;

    // The head_dim elements of (block, layer, K or V, kv_head, offset in block).
    void* row(int32_t block, int layer, int is_value, int kv_head, int in_block) const {
        return static_cast<char*>(data) +
               weight_type(dtype).bytes(layout.offset(block, layer, is_value, kv_head, in_block));
    }
    int64_t row_bytes() const { return weight_type(dtype).bytes(layout.head_dim); }
};

}  // namespace llamadesk::cpu
