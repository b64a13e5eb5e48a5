#include "backends/cpu/thread_pool.h"

#include <chrono>

namespace llamadesk::cpu {

namespace {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

// About 100 microseconds of spinning before sleeping: long enough to span the gaps between the
// jobs of one forward pass, short enough not to burn a shared core while idle.
constexpr int kSpinIterations = 4000;

}  // namespace

uint32_t ThreadPool::wait_change(const std::atomic<uint32_t>& value, uint32_t old) {
    for (int i = 0; i < kSpinIterations; ++i) {
        const uint32_t now = value.load(std::memory_order_acquire);
        if (now != old) return now;
        cpu_relax();
    }
    std::unique_lock<std::mutex> lock(sleep_mutex_);
    sleep_.wait(lock, [&] { return value.load(std::memory_order_acquire) != old; });
    return value.load(std::memory_order_acquire);
}

void ThreadPool::publish(std::atomic<uint32_t>& target, uint32_t value) {
    {
        std::lock_guard<std::mutex> lock(sleep_mutex_);
        target.store(value, std::memory_order_release);
    }
    sleep_.notify_all();
}

ThreadPool::ThreadPool(int n_threads) {
    for (int t = 1; t < n_threads; ++t) workers_.emplace_back([this, t] { worker_loop(t); });
}

ThreadPool::~ThreadPool() {
    stop_.store(true, std::memory_order_release);
    publish(job_, job_.load() + 1);
    for (std::thread& w : workers_) w.join();
}

void ThreadPool::run(int64_t n_items, Trampoline call, void* fn) {
    if (n_items <= 0) return;
    call_ = call;
    fn_ = fn;
    n_items_.store(n_items, std::memory_order_relaxed);
    done_items_.store(0, std::memory_order_relaxed);
    const uint32_t job = job_.load(std::memory_order_relaxed) + 1;
    unclaimed_.store(uint64_t(job) << 32 | uint64_t(n_items), std::memory_order_release);
    if (!workers_.empty() && n_items > 1) {
        publish(job_, job);
    }
    work(job, 0);
    for (uint32_t done; (done = done_items_.load(std::memory_order_acquire)) != uint32_t(n_items);)
        wait_change(done_items_, done);
    job_.store(job, std::memory_order_release);  // when no worker was woken
}

void ThreadPool::work(uint32_t job, int thread) {
    for (;;) {
        uint64_t unclaimed = unclaimed_.load(std::memory_order_acquire);
        // An item is claimed only while its job is current, so a late worker never runs an item of
        // a job it did not see start; and a job cannot end while one of its items is claimed, so
        // after a claim call_, fn_ and n_items_ are still that job's.
        if (uint32_t(unclaimed >> 32) != job || (unclaimed & 0xffffffffu) == 0) return;
        if (!unclaimed_.compare_exchange_weak(unclaimed, unclaimed - 1, std::memory_order_acq_rel)) continue;
        const int64_t n_items = n_items_.load(std::memory_order_relaxed);
        if (counting_.load(std::memory_order_relaxed)) {
            const auto start = std::chrono::steady_clock::now();
            call_(fn_, n_items - int64_t(unclaimed & 0xffffffffu), thread);
            busy_ns_.fetch_add(uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                            std::chrono::steady_clock::now() - start).count()),
                               std::memory_order_relaxed);
        } else {
            call_(fn_, n_items - int64_t(unclaimed & 0xffffffffu), thread);
        }
        if (done_items_.fetch_add(1, std::memory_order_acq_rel) + 1 == uint32_t(n_items)) {
            { std::lock_guard<std::mutex> lock(sleep_mutex_); }  // a sleeping caller sees the count or the notify
            sleep_.notify_all();
        }
    }
}

void ThreadPool::worker_loop(int thread) {
    uint32_t seen = 0;  // job_'s initial value: a worker that starts late still sees every later change
    for (;;) {
        seen = wait_change(job_, seen);
        if (stop_.load(std::memory_order_acquire)) return;
        work(seen, thread);
    }
}

}  // namespace llamadesk::cpu
