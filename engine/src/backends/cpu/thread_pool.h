// A persistent pool of worker threads for the forward pass. The caller's thread works too. A job is
// a range of items that threads claim one at a time, so a thread the OS has descheduled (the machine
// may be busy with other work) simply claims fewer items, and a job is done when its items are done,
// without waiting for late threads to show up. Between jobs the workers spin briefly (jobs come
// microseconds apart during a forward pass), then sleep on a condition variable.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace llamadesk::cpu {

class ThreadPool {
public:
    explicit ThreadPool(int n_threads);  // threads in all, the caller's included; >= 1
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    int size() const { return int(workers_.size()) + 1; }

    // While counting is on, the pool sums the time its threads spend running items: the bench's
    // figure of how long threads wait per token (size() x the wall time, less this). Off, items run
    // without a clock read.
    void set_counting(bool on) { counting_.store(on, std::memory_order_relaxed); }
    uint64_t busy_ns() const { return busy_ns_.load(std::memory_order_relaxed); }

    // Calls fn(item, thread) for every item in [0, n_items), thread in [0, size()); returns when
    // all are done. Not reentrant: one job at a time, from one calling thread.
    template <class F>
    void parallel_for(int64_t n_items, F&& fn) {
        run(n_items, [](void* f, int64_t item, int thread) { (*static_cast<F*>(f))(item, thread); },
            static_cast<void*>(&fn));
    }

private:
    using Trampoline = void (*)(void* fn, int64_t item, int thread);

    void run(int64_t n_items, Trampoline call, void* fn);
    void work(uint32_t job, int thread);  // claims and runs items of `job` while it has any left
    void worker_loop(int thread);
    // Waits until value != old: spins, then sleeps on sleep_ until woken by publish().
    uint32_t wait_change(const std::atomic<uint32_t>& value, uint32_t old);
    // Stores value (and wakes sleepers) so that a waiter can never miss it.
    void publish(std::atomic<uint32_t>& target, uint32_t value);

    std::vector<std::thread> workers_;
    // the current job, written before job_ is published
    Trampoline call_ = nullptr;
    void* fn_ = nullptr;
    std::atomic<int64_t> n_items_{0};
    alignas(64) std::atomic<uint32_t> job_{0};        // id of the current job; bumped to start one
    alignas(64) std::atomic<uint64_t> unclaimed_{0};  // (job id << 32) | items not yet claimed
    alignas(64) std::atomic<uint32_t> done_items_{0};
    std::atomic<bool> stop_{false};
    std::atomic<bool> counting_{false};
    alignas(64) std::atomic<uint64_t> busy_ns_{0};
    std::mutex sleep_mutex_;
    std::condition_variable sleep_;
};

}  // namespace llamadesk::cpu
