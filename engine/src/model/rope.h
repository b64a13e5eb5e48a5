// RoPE's rotation rates, the one statement of them: the CPU backend, the CUDA kernels (this header
// compiles for the device too), the readers' checks and the tests all ask rope_frequency().
//
// Pair i (0 <= i < head_dim / 2) of a head turns by pos * theta^(-2i / head_dim). Llama 3.1's
// scaling (Meta's apply_scaling; Hugging Face rope_type "llama3"; GGUF rope_freqs.weight) keeps
// the fast pairs, slows the pairs whose wavelength exceeds original_context / low_freq_factor by
// `factor`, and blends linearly in between.
#pragma once

#include <cmath>
#include <string>

#include "core/host_device.h"

namespace llamadesk {

struct RopeScaling {
    float factor = 0.0f;  // 0: none
    float low_freq_factor = 1.0f;
    float high_freq_factor = 4.0f;
    int original_context = 8192;

    LLAMADESK_HOST_DEVICE bool enabled() const { return factor > 0.0f; }
};

struct RopeParams {
    float theta = 10000.0f;
    RopeScaling scaling;
};

// Radians per position of pair `pair`, in double (at position 100000 a float angle is off by
// ~1e-2 rad).
LLAMADESK_HOST_DEVICE inline double rope_frequency(int pair, int head_dim, const RopeParams& p) {
    const double freq = pow(double(p.theta), -2.0 * pair / head_dim);
    const RopeScaling& s = p.scaling;
    if (!s.enabled()) return freq;
    const double pi = 3.14159265358979323846;
    const double wavelen = 2.0 * pi / freq;
    const double low_freq_wavelen = s.original_context / double(s.low_freq_factor);
    const double high_freq_wavelen = s.original_context / double(s.high_freq_factor);
    if (wavelen < high_freq_wavelen) return freq;
    if (wavelen > low_freq_wavelen) return freq / s.factor;
    const double smooth = (s.original_context / wavelen - s.low_freq_factor) /
                          (double(s.high_freq_factor) - s.low_freq_factor);
    return (1.0 - smooth) * freq / s.factor + smooth * freq;
}

}  // namespace llamadesk

#ifndef __CUDACC__
#include <optional>
#include <vector>

namespace llamadesk {

// GGUF's rope_freqs.weight: for each pair, the unscaled rate over the scaled one (llama.cpp
// divides by it).
std::vector<float> rope_freq_factors(int head_dim, const RopeParams& p);

// The Llama 3.1 scaling whose factors these are (factor = the largest, low_freq_factor 1,
// high_freq_factor 4, the given original context), or nullopt when some pair differs from that
// formula by more than 1e-3 relative; `mismatch` then names the first such pair and its numbers.
std::optional<RopeScaling> rope_scaling_of_factors(const std::vector<float>& factors, int head_dim,
                                                   float theta, int original_context, std::string* mismatch);

}  // namespace llamadesk
#endif
