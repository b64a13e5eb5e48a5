// What the benchmarks over the public Engine API share: a failed call ends the run with its
// message, and a figure is the median of its samples.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "core/error.h"
#include "llamadesk/engine.h"

namespace llamadesk::bench {

inline void check(const Status& s, const char* what) {
    if (!s.ok()) fail(s.code, std::string(what) + ": " + s.message);
}

inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

}  // namespace llamadesk::bench
