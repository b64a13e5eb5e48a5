#include "backends/cuda/decode_graph.h"

#include "backends/cuda/cuda_check.h"

namespace llamadesk::cuda {

void DecodeGraphs::run(DecodeKind kind, cudaStream_t stream, const std::function<void()>& enqueue) {
    cudaGraphExec_t& exec = exec_[int(kind)];
    if (!warmed_[int(kind)]) {
        // the first step runs eagerly: kernels load and cuBLAS picks its algorithms outside capture
        enqueue();
        warmed_[int(kind)] = true;
        return;
    }
    if (!exec) {
        CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
        cudaGraph_t graph = nullptr;
        try {
            enqueue();
        } catch (...) {
            cudaStreamEndCapture(stream, &graph);  // leave the stream usable
            if (graph) cudaGraphDestroy(graph);
            cudaGetLastError();
            throw;
        }
        CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
        const cudaError_t err = cudaGraphInstantiate(&exec, graph, 0);
        cudaGraphDestroy(graph);
        if (err != cudaSuccess) exec = nullptr;
        CUDA_CHECK(err);
    }
    CUDA_CHECK(cudaGraphLaunch(exec, stream));
}

void DecodeGraphs::clear() {
    for (cudaGraphExec_t& exec : exec_) {
        if (exec) cudaGraphExecDestroy(exec);
        exec = nullptr;
    }
    warmed_[0] = warmed_[1] = false;
}

}  // namespace llamadesk::cuda
