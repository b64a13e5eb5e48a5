// What llamadesk-bench needs from the CUDA backend beyond the Backend interface: a model with
// random weights made directly on the device (Llama-2-7B's 13 GB would be slow to make on the host
// and to upload), a description of its shapes for byte accounting, and the device's copy bandwidth
// to compare decode's weight streaming with.
#pragma once

#include <cstdint>
#include <memory>

#include "backends/backend.h"
#include "model/weight_mix.h"

namespace llamadesk {

// Any mix (f16, q8_0, q4_k_m, ...); block types hold real blocks of the reference quantizer, a
// short run of them repeated. Deterministic for a seed. Throws EngineError like make_cuda_backend.
std::unique_ptr<Backend> make_cuda_backend_synthetic(const ModelConfig& config, WeightMix mix,
                                                     uint64_t seed, const CudaBackendOptions& opts);

// A Checkpoint holding config and every tensor's name, shape and type, but no data: what
// make_cuda_backend_synthetic builds, for code that only counts bytes (separate classifier).
Checkpoint synthetic_shapes(const ModelConfig& config, WeightMix mix);

// Device-to-device cudaMemcpy bandwidth, bytes read plus bytes written per second: the median of
// several copies of a buffer far larger than the L2 cache.
double cuda_copy_bandwidth();

}  // namespace llamadesk
