// The measurements of llamadesk-bench, over any Backend: prefill and decode speed, decode with and
// without the KV cache, the weight bytes decode streams per second, and the sampler's time per token.
#pragma once

#include <vector>

#include "backends/backend.h"

namespace llamadesk::bench {

struct PrefillResult {
    int tokens;
    double tokens_per_s;
};

struct DecodeResult {
    int position;                // context position of the decoded tokens
    double tokens_per_s;         // with the KV cache
    double ms_per_token;
    double no_cache_ms_per_token;  // recomputing the whole prefix for each token
    double weight_bytes_per_s;   // weight bytes streamed per second while decoding
    // CPU: per token, the time the pool's threads spent not running items (threads x the step,
    // less their busy time: waiting for each other and idle while the step's serial work runs),
    // summed over threads; -1 on other backends
    double thread_wait_ms_per_token = -1;
};

struct BatchResult {
    int sequences;               // conversations decoding together, one token each per step
    int position;                // where each of them decodes
    double tokens_per_s;         // all of them together
    double per_sequence_tokens_per_s;
};

// Choosing one token from the model's own logits (the sampler's whole step, penalty included),
// microseconds per token.
struct SamplingResult {
    double default_us;     // the default settings: top-k 40, top-p 0.95, min-p 0.05
    double top_p_only_us;  // top-k and min-p off: top-p over the whole vocabulary, the slowest case
    double greedy_us;
};

struct BenchResults {
    std::vector<PrefillResult> prefill;
    std::vector<DecodeResult> decode;
    std::vector<BatchResult> batch;
    SamplingResult sampling{};
};

struct BenchPlan {
    std::vector<int> prefill_tokens{256, 1000};
    std::vector<int> decode_positions{16, 256, 1000};
    int decode_tokens = 8;  // tokens per decode sample
    std::vector<int> batch_sizes{1, 2, 4};  // batched decode: sequences per step
    int batch_position = 256;               // ... each at this position
    int repeats = 5;        // samples per figure; the median is reported
    bool cpu_time = false;  // time with the process's CPU time instead of the wall clock: on a
                            // machine busy with other work, one thread's figures stay comparable
};

BenchResults run_benchmarks(Backend& backend, const Checkpoint& ckpt, const BenchPlan& plan);

}  // namespace llamadesk::bench
