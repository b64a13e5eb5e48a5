// Ctrl+C stops the answer being generated instead of the program, while an InterruptGuard lives.
#pragma once

#include <atomic>

namespace llamadesk::cli {

class InterruptGuard {
public:
    InterruptGuard();
    ~InterruptGuard();
    InterruptGuard(const InterruptGuard&) = delete;
    InterruptGuard& operator=(const InterruptGuard&) = delete;

    // Set by Ctrl+C; the engine or the remote client reads it.
    static const std::atomic<bool>* flag();

private:
    void (*previous_)(int);
};

}  // namespace llamadesk::cli
