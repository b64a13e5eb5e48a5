// Chooses the next token from logits: repetition penalty, then greedy, or temperature with
// top-k, top-p and min-p filtering. Owns its RNG so a seed makes a run reproducible.
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "sampling/sampling_params.h"

namespace llamadesk {

class Sampler {
public:
    Sampler(int vocab_size, const SamplingParams& params);

    // logits: (vocab_size,), modified in place. recent: the tokens the penalty applies to.
    int32_t sample(float* logits, std::span<const int32_t> recent);

    const SamplingParams& params() const { return params_; }
    int vocab_size() const { return vocab_size_; }
    uint64_t next_random();  // for backends that sample on the device

private:
    int vocab_size_;
    SamplingParams params_;
    std::mt19937_64 rng_;
    std::vector<std::pair<float, int32_t>> candidates_;  // (weight, token id), reused scratch
    std::vector<int32_t> penalty_scratch_;               // distinct recent tokens, reused
};

}  // namespace llamadesk
