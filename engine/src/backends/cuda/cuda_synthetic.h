// A CUDA backend whose weights are random numbers generated directly on the device, for
// benchmarking shapes (Llama-2-7B) whose host copy would be slow to make and to upload.
#pragma once

#include <cstdint>
#include <memory>

#include "backends/backend.h"

namespace llamadesk {

// dtype: F16 or BF16 (or F32). Deterministic for a seed. Throws EngineError like make_cuda_backend.
std::unique_ptr<Backend> make_cuda_backend_synthetic(const ModelConfig& config, DType dtype,
                                                     uint64_t seed, const CudaBackendOptions& opts);

}  // namespace llamadesk
