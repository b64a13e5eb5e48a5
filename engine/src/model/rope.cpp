#include "model/rope.h"

#include <algorithm>
#include <cstdio>

namespace llamadesk {

std::vector<float> rope_freq_factors(int head_dim, const RopeParams& p) {
    std::vector<float> factors;
    for (int i = 0; i < head_dim / 2; ++i)
        factors.push_back(float(rope_frequency(i, head_dim, {p.theta, {}}) / rope_frequency(i, head_dim, p)));
    return factors;
}

std::optional<RopeScaling> rope_scaling_of_factors(const std::vector<float>& factors, int head_dim,
                                                   float theta, int original_context, std::string* mismatch) {
    RopeScaling s;
    s.factor = *std::max_element(factors.begin(), factors.end());
    s.original_context = original_context;
    const std::vector<float> expected = rope_freq_factors(head_dim, {theta, s});
    for (size_t i = 0; i < factors.size(); ++i)
        if (!(std::fabs(factors[i] - expected[i]) <= 1e-3f * expected[i])) {
            char text[160];
            std::snprintf(text, sizeof text, "pair %zu is %g where Llama 3.1's formula (factor %g, low 1, high 4, original context %d) gives %g",
                          i, double(factors[i]), double(s.factor), original_context, double(expected[i]));
            *mismatch = text;
            return std::nullopt;
        }
    return s;
}

}  // namespace llamadesk
