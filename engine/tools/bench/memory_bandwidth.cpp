#include "memory_bandwidth.h"

#include "bench_clock.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

namespace llamadesk::bench {

namespace {

uint64_t xor_reduce(const uint64_t* data, size_t n) {
    uint64_t acc[8] = {};
    for (size_t i = 0; i + 8 <= n; i += 8)
        for (int j = 0; j < 8; ++j) acc[j] ^= data[i + j];
    uint64_t r = 0;
    for (uint64_t a : acc) r ^= a;
    return r;
}

}  // namespace

double measure_read_bandwidth(int n_threads, bool cpu_time, long long bytes, int repeats) {
    const size_t n = size_t(bytes) / sizeof(uint64_t) / size_t(n_threads) / 8 * 8 * size_t(n_threads);
    std::vector<uint64_t> buffer(n);
    for (size_t i = 0; i < n; ++i) buffer[i] = i * 0x9e3779b97f4a7c15ull;  // touch every page

    std::vector<double> seconds;
    volatile uint64_t sink = 0;  // keeps the reduction from being optimised away
    for (int r = 0; r < repeats; ++r) {
        std::vector<uint64_t> partial(static_cast<size_t>(n_threads));
        const size_t share = n / size_t(n_threads);
        const double start = now_seconds(cpu_time);
        std::vector<std::thread> threads;
        for (int t = 0; t < n_threads; ++t)
            threads.emplace_back([&, t] { partial[size_t(t)] = xor_reduce(buffer.data() + size_t(t) * share, share); });
        for (std::thread& th : threads) th.join();
        seconds.push_back((now_seconds(cpu_time) - start) / (cpu_time ? n_threads : 1));
        for (uint64_t p : partial) sink = sink ^ p;
    }
    std::sort(seconds.begin(), seconds.end());
    return double(n * sizeof(uint64_t)) / seconds[seconds.size() / 2];
}

}  // namespace llamadesk::bench
