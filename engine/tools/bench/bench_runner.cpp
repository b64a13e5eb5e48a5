#include "bench_runner.h"

#include "backends/cpu/cpu_backend.h"
#include "bench_clock.h"
#include "sampling/sampler.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <span>

namespace llamadesk::bench {

namespace {

constexpr int kBlockSize = 16;

template <class F>
double median_seconds(int repeats, bool cpu_time, F&& run) {
    std::vector<double> s;
    for (int r = 0; r < repeats; ++r) {
        const double start = now_seconds(cpu_time);
        run();
        s.push_back(now_seconds(cpu_time) - start);
    }
    std::sort(s.begin(), s.end());
    return s[s.size() / 2];
}

// One more pass of `run` (tokens tokens) with the CPU pool counting its busy time: the threads'
// time not running items, per token; -1 where the backend has no pool.
template <class F>
double thread_wait_ms_per_token(Backend& backend, F&& run, int tokens) {
    auto* cpu = dynamic_cast<cpu::CpuBackend*>(&backend);
    if (!cpu) return -1;
    cpu::ThreadPool& pool = cpu->thread_pool();
    pool.set_counting(true);
    const uint64_t busy_before = pool.busy_ns();
    const double start = now_seconds(false);
    run();
    const double wall = now_seconds(false) - start;
    const double busy = double(pool.busy_ns() - busy_before) * 1e-9;
    pool.set_counting(false);
    return std::max(0.0, pool.size() * wall - busy) * 1e3 / tokens;
}

}  // namespace

BenchResults run_benchmarks(Backend& backend, const Checkpoint& ckpt, const BenchPlan& plan) {
    const ModelConfig& c = ckpt.config;
    const KvLayout layout{c.n_layers, c.n_kv_heads, c.head_dim(), kBlockSize};
    // Sequence s (0 for every single-sequence figure) owns blocks [s * per_context, (s + 1) * per_context).
    const int per_context = (c.seq_len + kBlockSize - 1) / kBlockSize;
    const int n_sequences = std::max(1, plan.batch_sizes.empty() ? 1 : *std::max_element(plan.batch_sizes.begin(), plan.batch_sizes.end()));
    std::vector<int32_t> blocks(size_t(per_context) * size_t(n_sequences));
    std::iota(blocks.begin(), blocks.end(), 0);
    backend.allocate_kv_pool(layout, int(blocks.size()));
    auto table_of = [&](int s) { return BlockTableView{blocks.data() + size_t(s) * size_t(per_context), per_context}; };
    const BlockTableView view = table_of(0);

    std::mt19937 rng(1234);
    std::vector<int32_t> tokens(size_t(c.seq_len));
    for (int32_t& t : tokens) t = int32_t(rng() % uint32_t(c.vocab_size));
    std::vector<float> logits(size_t(c.vocab_size));
    auto run = [&](int start_pos, int n) {
        backend.forward({tokens.data() + start_pos, size_t(n)}, start_pos, view, logits.data());
    };

    BenchResults results;
    run(0, std::min(c.seq_len, 16));  // warm up: fault in the weights
    for (int n : plan.prefill_tokens) {
        if (n > c.seq_len) continue;
        const double s = median_seconds(plan.repeats, plan.cpu_time, [&] { run(0, n); });
        results.prefill.push_back({n, n / s});
    }

    std::vector<int> positions;
    for (int p : plan.decode_positions) {
        const int clamped = std::min(p, c.seq_len - plan.decode_tokens);
        if (clamped >= 0 && std::find(positions.begin(), positions.end(), clamped) == positions.end())
            positions.push_back(clamped);
    }
    const double weight_bytes = double(ckpt.weight_bytes_per_token());
    for (int pos : positions) {
        if (pos > 0) run(0, pos);  // fill the context up to pos
        const double s = median_seconds(plan.repeats, plan.cpu_time, [&] {
            for (int i = 0; i < plan.decode_tokens; ++i) run(pos + i, 1);
        });
        const double per_token = s / plan.decode_tokens;
        const double wait = thread_wait_ms_per_token(backend, [&] {
            for (int i = 0; i < plan.decode_tokens; ++i) run(pos + i, 1);
        }, plan.decode_tokens);
        const double no_cache = median_seconds(std::min(plan.repeats, 3), plan.cpu_time, [&] { run(0, pos + 1); });
        results.decode.push_back({pos, 1.0 / per_token, per_token * 1e3, no_cache * 1e3, weight_bytes / per_token, wait});
    }

    // The sampler over the logits of the last decoded token, as generation calls it once a token.
    auto sampling_us = [&](SamplingParams params) {
        params.seed = 1;
        Sampler sampler(c.vocab_size, params);
        constexpr int kSamples = 100;
        const std::span<const int32_t> recent(tokens.data(), size_t(std::min(c.seq_len, 64)));
        return 1e6 / kSamples * median_seconds(plan.repeats, plan.cpu_time, [&] {
                   for (int i = 0; i < kSamples; ++i) sampler.sample(logits.data(), recent);
               });
    };
    SamplingParams top_p_only, greedy;
    top_p_only.top_k = 0;
    top_p_only.min_p = 0.0f;
    greedy.temperature = 0.0f;
    results.sampling = {sampling_us({}), sampling_us(top_p_only), sampling_us(greedy)};

    // Batched decode: k sequences, each with its own blocks filled to batch_position, one token of
    // each per step.
    const int pos = std::min(plan.batch_position, c.seq_len - plan.decode_tokens);
    for (int s = 0; s < n_sequences && pos >= 0 && !plan.batch_sizes.empty(); ++s)
        if (pos > 0) backend.forward({tokens.data(), size_t(pos)}, 0, table_of(s), logits.data());
    std::vector<float> batch_logits;
    for (int k : plan.batch_sizes) {
        if (k < 1 || pos < 0) continue;
        batch_logits.resize(size_t(k) * size_t(c.vocab_size));
        const double s = median_seconds(plan.repeats, plan.cpu_time, [&] {
            for (int i = 0; i < plan.decode_tokens; ++i) {
                std::vector<BatchToken> batch;
                for (int q = 0; q < k; ++q) batch.push_back({tokens[size_t(pos + i)], pos + i, table_of(q)});
                backend.decode_batch(batch, batch_logits.data());
            }
        });
        const double steps_per_s = plan.decode_tokens / s;
        results.batch.push_back({k, pos, steps_per_s * k, steps_per_s});
    }
    return results;
}

}  // namespace llamadesk::bench
