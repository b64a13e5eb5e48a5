// The benchmark's clock: the wall clock, or the process's CPU time (which stays comparable for one
// thread on a machine busy with other work).
#pragma once

#include <ctime>

namespace llamadesk::bench {

inline double now_seconds(bool cpu_time) {
    timespec ts;
    clock_gettime(cpu_time ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

}  // namespace llamadesk::bench
