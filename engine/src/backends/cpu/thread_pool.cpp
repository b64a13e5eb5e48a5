#include "backends/cpu/thread_pool.h"

namespace llamadesk::cpu {

namespace {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

// Spins about 50-100 microseconds before sleeping: long enough to span the gaps between the jobs
// of one forward pass, short enough not to burn a shared core while idle.
constexpr int kSpinIterations = 20000;

// Waits until value != old, spinning first; returns the new value.
template <class T>
T wait_change(const std::atomic<T>& value, T old) {
    for (int i = 0; i < kSpinIterations; ++i) {
        const T now = value.load(std::memory_order_acquire);
        if (now != old) return now;
        cpu_relax();
    }
    value.wait(old, std::memory_order_acquire);
    return value.load(std::memory_order_acquire);
}

}  // namespace

ThreadPool::ThreadPool(int n_threads) {
    for (int t = 1; t < n_threads; ++t) workers_.emplace_back([this, t] { worker_loop(t); });
}

ThreadPool::~ThreadPool() {
    stop_.store(true, std::memory_order_release);
    generation_.fetch_add(1, std::memory_order_acq_rel);
    generation_.notify_all();
    for (std::thread& w : workers_) w.join();
}

void ThreadPool::run(int64_t n_items, Trampoline call, void* fn) {
    if (n_items <= 0) return;
    call_ = call;
    fn_ = fn;
    n_items_ = n_items;
    next_item_.store(0, std::memory_order_relaxed);
    if (workers_.empty() || n_items == 1) {
        work(0);
        return;
    }
    busy_workers_.store(int(workers_.size()), std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
    generation_.notify_all();
    work(0);
    for (int busy = busy_workers_.load(std::memory_order_acquire); busy != 0;)
        busy = wait_change(busy_workers_, busy);
}

void ThreadPool::work(int thread) {
    for (int64_t item; (item = next_item_.fetch_add(1, std::memory_order_relaxed)) < n_items_;)
        call_(fn_, item, thread);
}

void ThreadPool::worker_loop(int thread) {
    uint64_t seen = 0;
    for (;;) {
        seen = wait_change(generation_, seen);
        if (stop_.load(std::memory_order_acquire)) return;
        work(thread);
        if (busy_workers_.fetch_sub(1, std::memory_order_acq_rel) == 1) busy_workers_.notify_one();
    }
}

}  // namespace llamadesk::cpu
