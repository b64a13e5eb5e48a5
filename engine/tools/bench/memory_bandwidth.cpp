#include "memory_bandwidth.h"

#include "bench_clock.h"

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

namespace llamadesk::bench {

namespace {

// XOR of every 64-bit word, in the widest registers the machine has: with narrower loads a core
// cannot issue enough reads to keep the memory busy, and the probe measures the core instead.
// Four independent accumulators keep the loads in flight.
__attribute__((target("avx512f"))) uint64_t xor_reduce_avx512(const uint64_t* data, size_t n) {
    __m512i acc[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(),
                      _mm512_setzero_si512()};
    for (size_t i = 0; i + 32 <= n; i += 32)
        for (int j = 0; j < 4; ++j)
            acc[j] = _mm512_xor_si512(acc[j], _mm512_load_si512(data + i + 8 * j));
    const __m512i all = _mm512_xor_si512(_mm512_xor_si512(acc[0], acc[1]), _mm512_xor_si512(acc[2], acc[3]));
    alignas(64) uint64_t lanes[8];
    _mm512_store_si512(lanes, all);
    uint64_t r = 0;
    for (uint64_t lane : lanes) r ^= lane;
    return r;
}

__attribute__((target("avx2"))) uint64_t xor_reduce_avx2(const uint64_t* data, size_t n) {
    __m256i acc[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(),
                      _mm256_setzero_si256()};
    for (size_t i = 0; i + 16 <= n; i += 16)
        for (int j = 0; j < 4; ++j)
            acc[j] = _mm256_xor_si256(acc[j], _mm256_load_si256(reinterpret_cast<const __m256i*>(data + i + 4 * j)));
    const __m256i all = _mm256_xor_si256(_mm256_xor_si256(acc[0], acc[1]), _mm256_xor_si256(acc[2], acc[3]));
    alignas(32) uint64_t lanes[4];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), all);
    return lanes[0] ^ lanes[1] ^ lanes[2] ^ lanes[3];
}

uint64_t xor_reduce_generic(const uint64_t* data, size_t n) {
    uint64_t acc[8] = {};
    for (size_t i = 0; i + 8 <= n; i += 8)
        for (int j = 0; j < 8; ++j) acc[j] ^= data[i + j];
    uint64_t r = 0;
    for (uint64_t a : acc) r ^= a;
    return r;
}

using XorReduce = uint64_t (*)(const uint64_t*, size_t);

// Every line of the buffer out of every cache level, so the pass after it reads memory whatever a
// last-level cache of several hundred MiB (a Xeon's, shared by a VM's few cores) kept between passes.
// (On such a machine, 2 threads: 1 GiB kept 26.82 GB/s, flushed 26.81; 4 GiB 28.40 and 27.94.)
void flush_from_caches(const uint64_t* data, size_t n) {
    for (size_t i = 0; i < n; i += 8) _mm_clflush(data + i);
    _mm_mfence();
}

XorReduce widest_xor_reduce() {
    if (__builtin_cpu_supports("avx512f")) return xor_reduce_avx512;
    if (__builtin_cpu_supports("avx2")) return xor_reduce_avx2;
    return xor_reduce_generic;
}

}  // namespace

double measure_read_bandwidth(int n_threads, bool cpu_time, long long bytes, int repeats) {
    // Each thread's share is a whole number of 256-byte steps, 64-byte aligned.
    constexpr size_t kStep = 32;
    const size_t share = size_t(bytes) / sizeof(uint64_t) / size_t(n_threads) / kStep * kStep;
    const size_t n = share * size_t(n_threads);
    std::vector<uint64_t> storage(n + 8);
    uint64_t* buffer = storage.data() + (8 - reinterpret_cast<uintptr_t>(storage.data()) / 8 % 8) % 8;
    for (size_t i = 0; i < n; ++i) buffer[i] = i * 0x9e3779b97f4a7c15ull;  // touch every page

    const XorReduce reduce = widest_xor_reduce();
    double best = 0;
    volatile uint64_t sink = 0;  // keeps the reduction from being optimised away
    for (int r = 0; r < repeats; ++r) {
        flush_from_caches(buffer, n);
        std::vector<uint64_t> partial(static_cast<size_t>(n_threads));
        const double start = now_seconds(cpu_time);
        std::vector<std::thread> threads;
        for (int t = 0; t < n_threads; ++t)
            threads.emplace_back([&, t] { partial[size_t(t)] = reduce(buffer + size_t(t) * share, share); });
        for (std::thread& th : threads) th.join();
        const double seconds = (now_seconds(cpu_time) - start) / (cpu_time ? n_threads : 1);
        best = std::max(best, double(n * sizeof(uint64_t)) / seconds);
        for (uint64_t p : partial) sink = sink ^ p;
    }
    return best;
}

}  // namespace llamadesk::bench
