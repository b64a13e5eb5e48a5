#include "backends/cuda/decode_graph.h"

#include "backends/cuda/cuda_check.h"

namespace llamadesk::cuda {

void DecodeGraphs::run(DecodeKind kind, cudaStream_t stream, const std::function<void()>& enqueue) {
    cudaGraphExec_t& exec = exec_[int(kind)];
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
}

}  // namespace llamadesk::cuda
