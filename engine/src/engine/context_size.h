// How many positions a conversation may hold: the model's context, the person's limit, and the
// memory one full context's KV cache takes.
#pragma once

#include <cstdint>
#include <string>

#include "llamadesk/engine.h"

namespace llamadesk {

struct ContextChoice {
    int n_ctx;
    std::string reason;  // for ModelInfo::context_reason, with the memory it takes
};

// "4.6 GiB", as the reasons say memory.
std::string gib(double bytes);

// The person's limit (params.context_length) when it is below the model's context; else the
// model's, unless one full context's KV cache would take more than a quarter of the memory
// available: then the largest power of two, from 256, that fits there.
ContextChoice choose_context(const LoadParams& params, int trained, double bytes_per_token, int64_t available,
                             const char* kv_type);

}  // namespace llamadesk
