#include "model/parallel_for.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "core/cpu_threads.h"

namespace llamadesk {

void parallel_for(size_t n, const std::function<void(size_t)>& fn) {
    std::atomic<size_t> next{0};
    auto worker = [&] {
        for (size_t i = next++; i < n; i = next++) fn(i);
    };
    const size_t n_threads = std::min<size_t>(n, size_t(default_compute_threads()));
    std::vector<std::thread> pool;
    for (size_t t = 1; t < n_threads; ++t) pool.emplace_back(worker);
    worker();
    for (std::thread& t : pool) t.join();
}

}  // namespace llamadesk
