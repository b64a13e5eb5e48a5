// The machine's memory read bandwidth, measured the way decode reads weights: every thread streams
// its share of a buffer far larger than the caches. The reduction is an integer XOR, which the
// compiler vectorizes (a float sum would be serialised on the adder without -ffast-math and measure
// the adder, not the memory).
#pragma once

namespace llamadesk::bench {

// Bytes per second read by n_threads threads, the median of `repeats` passes over `bytes` bytes.
// cpu_time: time by the process's CPU time per thread instead of the wall clock.
double measure_read_bandwidth(int n_threads, bool cpu_time = false, long long bytes = 1ll << 30, int repeats = 5);

}  // namespace llamadesk::bench
