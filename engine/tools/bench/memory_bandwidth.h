// The machine's memory read bandwidth, measured the way decode reads weights: every thread streams
// its share of a buffer far larger than the caches, flushed from them before each pass. The reduction is an integer XOR in the widest
// vector registers the machine has (a float sum would be serialised on the adder and measure the
// adder, not the memory; scalar or SSE loads cannot keep enough reads in flight).
#pragma once

namespace llamadesk::bench {

// Bytes per second read by n_threads threads, the best of `repeats` passes over `bytes` bytes:
// what the memory can deliver, which a pass slowed by other work on the machine does not show.
// cpu_time: time by the process's CPU time per thread instead of the wall clock.
double measure_read_bandwidth(int n_threads, bool cpu_time = false, long long bytes = 1ll << 30, int repeats = 5);

}  // namespace llamadesk::bench
