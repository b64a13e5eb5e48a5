// Runs fn(0) ... fn(n - 1) on a thread per core (default_compute_threads), each thread taking the
// next index: for the load-time passes over weights (synthetic fill, validation), which are
// independent per chunk.
#pragma once

#include <cstddef>
#include <functional>

namespace llamadesk {

void parallel_for(size_t n, const std::function<void(size_t)>& fn);

}  // namespace llamadesk
