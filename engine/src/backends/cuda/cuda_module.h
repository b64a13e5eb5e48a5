// The CUDA backend is a shared module, libllamadesk-cuda.so, that the engine opens at run time when
// it is installed (as ggml loads its backends), so the programs and their package never depend on
// NVIDIA's libraries. The module exports one symbol, a table of its entry points. Engine and module
// pass C++ objects to each other (Checkpoint, std::string, std::unique_ptr<Backend>), so both must
// come from the same sources and compiler: the loader refuses a module whose `abi` or `layout`
// differs from its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "backends/backend.h"
#include "model/weight_mix.h"

namespace llamadesk {

struct CudaModuleTable {
    const char* abi;  // kCudaModuleAbi of the build that made the module
    uint64_t layout;  // cuda_module_layout() there
    bool (*available)(std::string* why);
    std::unique_ptr<Backend> (*make_backend)(const Checkpoint& ckpt, const CudaBackendOptions& opts);
    std::unique_ptr<Backend> (*make_backend_synthetic)(const ModelConfig& config, WeightMix mix,
                                                       uint64_t seed, const CudaBackendOptions& opts);
    double (*copy_bandwidth)();
    int64_t (*memory_available)();
};

inline constexpr char kCudaModuleFile[] = "libllamadesk-cuda.so";
inline constexpr char kCudaModuleSymbol[] = "llamadesk_cuda_module";
// The project's version and the compiler (set by CMake for the engine and the module alike).
inline constexpr char kCudaModuleAbi[] = LLAMADESK_MODULE_ABI;

// The sizes of what crosses between engine and module, so a module built with other options of the
// same compiler is refused rather than misread.
constexpr uint64_t cuda_module_layout() {
    return uint64_t(sizeof(Checkpoint)) | uint64_t(sizeof(CudaBackendOptions)) << 16 |
           uint64_t(sizeof(ModelConfig)) << 32 | uint64_t(sizeof(Backend)) << 48;
}

// Opens the module at `path` and checks it: the table, or nullptr with the reason in `why`. An
// opened module stays loaded (its backends' code lives there). The engine's CUDA entry points
// (backend.h, cuda_bench_support.h) use the first module found; tests call this with their own.
const CudaModuleTable* open_cuda_module(const std::string& path, std::string* why);

namespace cuda {
// The module's side: what its table points at.
bool backend_available(std::string* why);
std::unique_ptr<Backend> make_backend(const Checkpoint& ckpt, const CudaBackendOptions& opts);
std::unique_ptr<Backend> make_backend_synthetic(const ModelConfig& config, WeightMix mix, uint64_t seed,
                                                const CudaBackendOptions& opts);
double copy_bandwidth();
int64_t memory_available();
}  // namespace cuda

}  // namespace llamadesk
