#include "sampling/sampler.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace llamadesk {

namespace {

// CTRL-style repetition penalty (Keskar et al. 2019, as llama.cpp applies it): each distinct
// recent token's logit is divided by the penalty when positive and multiplied when negative, so
// the token always becomes less likely.
void apply_repetition_penalty(float* logits, int vocab_size, std::span<const int32_t> recent,
                              float penalty, std::vector<int32_t>& scratch) {
    if (penalty == 1.0f || recent.empty()) return;
    scratch.assign(recent.begin(), recent.end());
    std::sort(scratch.begin(), scratch.end());
    scratch.erase(std::unique(scratch.begin(), scratch.end()), scratch.end());
    for (int32_t t : scratch) {
        if (t < 0 || t >= vocab_size) continue;
        float& l = logits[t];
        l = l > 0.0f ? l / penalty : l * penalty;
    }
}

int32_t argmax(const float* logits, int n) {
    return int32_t(std::max_element(logits, logits + n) - logits);
}

// A uniform double in [0, 1) from the top 53 bits, the same on every platform (the standard
// distributions are not specified bit for bit).
double uniform01(std::mt19937_64& rng) {
    return double(rng() >> 11) * (1.0 / 9007199254740992.0);
}

bool by_probability_desc(const std::pair<float, int32_t>& a, const std::pair<float, int32_t>& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
}

// Moves to the front the shortest prefix, in by_probability_desc order, of the candidates whose
// weights add up to at least `mass`, and returns its length; the prefix itself is left unsorted.
// Each nth_element splits the range still in question into its better and worse halves, and the
// better half's weight says in which one the prefix ends: linear, where sorting the candidates took
// 17 ms a token with top-k off over an 8B model's 128256 flat logits (llamadesk-bench's sampling).
size_t top_mass_prefix(std::vector<std::pair<float, int32_t>>& c, double mass) {
    constexpr ptrdiff_t kSortBelow = 64;
    auto first = c.begin(), last = c.end();
    double before = 0.0;  // the weight in front of first
    while (last - first > kSortBelow) {
        const auto mid = first + (last - first) / 2;
        std::nth_element(first, mid, last, by_probability_desc);
        double better = 0.0;
        for (auto it = first; it != mid; ++it) better += it->first;
        if (before + better >= mass) {
            last = mid;
        } else {
            before += better;
            first = mid;
        }
    }
    std::sort(first, last, by_probability_desc);
    for (auto it = first; it != last; ++it) {
        before += it->first;
        if (before >= mass) return size_t(it - c.begin()) + 1;
    }
    return size_t(last - c.begin());  // the halves' sums reached the mass where this order's fell short by rounding
}

}  // namespace

Sampler::Sampler(int vocab_size, const SamplingParams& params)
    : vocab_size_(vocab_size), params_(params) {
    if (vocab_size <= 0) fail(ErrorCode::InvalidArgument, "sampler: vocabulary size must be positive");
    if (const Status s = validate_sampling(params); !s.ok()) fail(s.code, s.message);
    const uint64_t seed = params.seed >= 0
                              ? uint64_t(params.seed)
                              : (uint64_t(std::random_device{}()) << 32) ^ std::random_device{}();
    rng_.seed(seed);
}

uint64_t Sampler::next_random() { return rng_(); }

int32_t Sampler::sample(float* logits, std::span<const int32_t> recent) {
    const SamplingParams& p = params_;
    const size_t last_n = size_t(std::max(p.repeat_last_n, 0));
    if (recent.size() > last_n) recent = recent.subspan(recent.size() - last_n);
    apply_repetition_penalty(logits, vocab_size_, recent, p.repeat_penalty, penalty_scratch_);

    if (p.temperature <= 0.0f) return argmax(logits, vocab_size_);

    // Candidates as (logit / temperature, id). With top-k only the k best are kept, found in one
    // pass with a heap of k whose front is the worst kept: almost every logit of a 128k vocabulary
    // loses to it in one comparison, so no copy or selection over the whole vocabulary is made.
    candidates_.clear();
    if (p.top_k > 0 && p.top_k < vocab_size_) {
        for (int i = 0; i < vocab_size_; ++i) {
            const std::pair<float, int32_t> c{logits[i] / p.temperature, i};
            if (int(candidates_.size()) < p.top_k) {
                candidates_.push_back(c);
                std::push_heap(candidates_.begin(), candidates_.end(), by_probability_desc);
            } else if (by_probability_desc(c, candidates_.front())) {
                std::pop_heap(candidates_.begin(), candidates_.end(), by_probability_desc);
                candidates_.back() = c;
                std::push_heap(candidates_.begin(), candidates_.end(), by_probability_desc);
            }
        }
        std::sort_heap(candidates_.begin(), candidates_.end(), by_probability_desc);
    } else {
        candidates_.resize(size_t(vocab_size_));
        for (int i = 0; i < vocab_size_; ++i) candidates_[size_t(i)] = {logits[i] / p.temperature, i};
    }

    // Softmax over the candidates; `total` normalizes for top-p, which is defined on the
    // distribution before min-p and top-p cut it.
    float max_logit = -INFINITY;
    for (const auto& c : candidates_) max_logit = std::max(max_logit, c.first);
    double total = 0.0;
    for (auto& c : candidates_) {
        c.first = std::exp(c.first - max_logit);
        total += c.first;
    }

    // min-p keeps tokens at least min_p times as likely as the best one (whose weight is 1).
    // Both min-p and top-p keep a prefix of the candidates sorted by probability, so applying
    // min-p first, before sorting, gives the same set and leaves less to sort.
    if (p.min_p > 0.0f) {
        const float threshold = std::min(p.min_p, 1.0f);  // the best token always stays
        std::erase_if(candidates_, [&](const auto& c) { return c.first < threshold; });
    }
    if (p.top_p < 1.0f) {
        // As llama2.c does: a token with probability below (1 - top_p) / (n - 1) can never be
        // inside the top-p prefix, so those are dropped before sorting.
        const size_t n = candidates_.size();
        if (n > 1) {
            const double cutoff = std::min((1.0 - p.top_p) / double(n - 1) * total, 1.0);
            std::erase_if(candidates_, [&](const auto& c) { return c.first < cutoff; });
        }
        candidates_.resize(top_mass_prefix(candidates_, p.top_p * total));
    }

    double kept = 0.0;
    for (const auto& c : candidates_) kept += c.first;
    const double r = uniform01(rng_) * kept;
    double cumulative = 0.0;
    for (const auto& c : candidates_) {
        cumulative += c.first;
        if (r < cumulative) return c.second;
    }
    return candidates_.back().second;  // rounding left r at the very end
}

}  // namespace llamadesk
