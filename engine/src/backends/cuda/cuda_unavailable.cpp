// Built when this build has no CUDA backend: the backend is reported unavailable with the reason.
#include "backends/backend.h"
#include "backends/cuda/cuda_bench_support.h"
#include "core/error.h"

namespace llamadesk {

namespace {
const char* const kNoCuda =
    "this build has no CUDA backend (built with LLAMADESK_CUDA=OFF or without nvcc)";
}

bool cuda_backend_available(std::string* why) {
    if (why) *why = kNoCuda;
    return false;
}

std::unique_ptr<Backend> make_cuda_backend(const Checkpoint&, const CudaBackendOptions&) {
    fail(ErrorCode::BackendUnavailable, kNoCuda);
}

std::unique_ptr<Backend> make_cuda_backend_synthetic(const ModelConfig&, WeightMix, uint64_t,
                                                     const CudaBackendOptions&) {
    fail(ErrorCode::BackendUnavailable, kNoCuda);
}

double cuda_copy_bandwidth() { fail(ErrorCode::BackendUnavailable, kNoCuda); }

}  // namespace llamadesk
