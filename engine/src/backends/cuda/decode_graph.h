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

    // Launches the graph of `kind` on stream, capturing `enqueue` first if there is none.
    void run(DecodeKind kind, cudaStream_t stream, const std::function<void()>& enqueue);
    // Forgets every graph (after the buffers they captured changed).
    void clear();

private:
    cudaGraphExec_t exec_[2] = {nullptr, nullptr};
};

}  // namespace llamadesk::cuda
