// How the next token is chosen, and the one statement of the valid ranges.
#pragma once

#include "core/status.h"

namespace llamadesk {

// Valid ranges are given first; validate_sampling() checks them and generate() refuses the rest.
// The defaults are everyone's (the window, the CLI, the benches): those of llama.cpp's tools.
struct SamplingParams {
    float temperature = 0.8f;    // >= 0; 0: greedy
    int top_k = 40;              // >= 0; 0: off
    float top_p = 0.95f;         // (0, 1]; 1: off
    float min_p = 0.05f;         // [0, 1]; 0: off
    float repeat_penalty = 1.0f; // > 0; 1: off
    int repeat_last_n = 64;      // >= 0; how many recent tokens the penalty looks at
    int64_t seed = -1;           // any; < 0: a random seed; otherwise runs are reproducible
};

// Ok, or InvalidArgument naming the first field out of range and the value given, e.g.
// "top-p must be in (0, 1] (1 turns it off), not 7". NaN and infinities are out of range.
Status validate_sampling(const SamplingParams& params);

}  // namespace llamadesk
