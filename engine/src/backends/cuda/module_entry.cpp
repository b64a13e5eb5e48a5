// The one symbol libllamadesk-cuda.so exports (everything else in it is hidden).
#include "backends/cuda/cuda_module.h"

extern "C" __attribute__((visibility("default"))) const llamadesk::CudaModuleTable llamadesk_cuda_module = {
    llamadesk::kCudaModuleAbi,
    llamadesk::cuda_module_layout(),
    &llamadesk::cuda::backend_available,
    &llamadesk::cuda::make_backend,
    &llamadesk::cuda::make_backend_synthetic,
    &llamadesk::cuda::copy_bandwidth,
    &llamadesk::cuda::memory_available,
};
