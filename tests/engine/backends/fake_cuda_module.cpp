// Stand-ins for libllamadesk-cuda.so with no device behind them, to test how the engine finds,
// checks and calls a module. Built three times (CMakeLists.txt): FAKE_ABI names the build it claims
// to come from; without it the module has no table at all.
#include "backends/cuda/cuda_module.h"
#include "core/error.h"

#ifdef FAKE_ABI
namespace {

using namespace llamadesk;

bool available(std::string* why) {
    if (why) *why = "fake module: no device";
    return false;
}

std::unique_ptr<Backend> make_backend(const Checkpoint&, const CudaBackendOptions&) {
    fail(ErrorCode::OutOfMemory, "fake module: out of device memory");
}

std::unique_ptr<Backend> make_backend_synthetic(const ModelConfig&, WeightMix, uint64_t, const CudaBackendOptions&) {
    fail(ErrorCode::OutOfMemory, "fake module: out of device memory");
}

double copy_bandwidth() { return 42.0; }

}  // namespace

extern "C" __attribute__((visibility("default"))) const CudaModuleTable llamadesk_cuda_module = {
    FAKE_ABI, cuda_module_layout(), &available, &make_backend, &make_backend_synthetic, &copy_bandwidth,
};
#endif
