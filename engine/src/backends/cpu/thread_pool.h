// A persistent pool of worker threads for the forward pass. The caller's thread works too. Work is
// a range of items that threads take one at a time from a shared counter, so a thread that the OS
// delays simply takes fewer items. Between jobs the workers spin briefly (jobs come every few
// microseconds during a forward pass), then sleep on an atomic wait.
#pragma once

#include <atomic>
#include <cstdint>
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
    void work(int thread);  // takes items of the current job until none are left
    void worker_loop(int thread);

    std::vector<std::thread> workers_;
    // the current job
    Trampoline call_ = nullptr;
    void* fn_ = nullptr;
    int64_t n_items_ = 0;
    alignas(64) std::atomic<int64_t> next_item_{0};
    alignas(64) std::atomic<uint64_t> generation_{0};  // bumped to start a job
    alignas(64) std::atomic<int> busy_workers_{0};     // workers still inside the current job
    std::atomic<bool> stop_{false};
};

}  // namespace llamadesk::cpu
