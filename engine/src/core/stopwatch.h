// Wall-clock timing for the engine's statistics.
#pragma once

#include <chrono>

namespace llamadesk {

class Stopwatch {
public:
    Stopwatch() : start_(std::chrono::steady_clock::now()) {}
    void restart() { start_ = std::chrono::steady_clock::now(); }
    double elapsed_ms() const {
        return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
    }

private:
    std::chrono::steady_clock::time_point start_;
};

// Tokens per second, 0 when no time has passed.
inline double tokens_per_second(int64_t tokens, double ms) { return ms > 0 ? tokens * 1000.0 / ms : 0.0; }

}  // namespace llamadesk
