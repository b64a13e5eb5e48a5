// CUDA graphs for the decode step: the kernels of one token's forward pass (and sampling) are
// captured once per kind of step and replayed each token, removing the per-kernel launch cost.
// This works because every buffer they touch has a fixed address for the backend's lifetime and
// everything that changes per step (position, token, block table) is read from device memory.
#pragma once

#include <cuda_runtime.h>

#include <functional>

namespace llamadesk::cuda {

enum class DecodeKind { Logits, Sample };

class DecodeGraphs {
public:
    DecodeGraphs() = default;
    ~DecodeGraphs() { clear(); }
    DecodeGraphs(const DecodeGraphs&) = delete;
    DecodeGraphs& operator=(const DecodeGraphs&) = delete;

    // Runs the step of `kind` on stream: eagerly the first time, then captured from `enqueue`
    // once and replayed.
    void run(DecodeKind kind, cudaStream_t stream, const std::function<void()>& enqueue);
    // Forgets every graph (after the buffers they captured changed).
    void clear();

private:
    cudaGraphExec_t exec_[2] = {nullptr, nullptr};
    bool warmed_[2] = {false, false};
};

}  // namespace llamadesk::cuda
