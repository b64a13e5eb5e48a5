// The engine's side of the CUDA module: find it, open it, check it, forward to it.
#include "backends/cuda/cuda_module.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <vector>

#include "backends/cuda/cuda_bench_support.h"
#include "core/error.h"

namespace llamadesk {

namespace fs = std::filesystem;

namespace {

// $LLAMADESK_CUDA_MODULE, when set and not empty.
const char* chosen_module() {
    const char* chosen = std::getenv("LLAMADESK_CUDA_MODULE");
    return chosen != nullptr && *chosen != '\0' ? chosen : nullptr;
}

// $LLAMADESK_CUDA_MODULE alone when set; else next to the program (the build tree links it there),
// then the installed place, <prefix>/<libdir>/llamadesk/ beside <prefix>/bin.
std::vector<fs::path> module_candidates() {
    if (const char* chosen = chosen_module()) return {chosen};
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (ec) return {};
    return {exe.parent_path() / kCudaModuleFile,
            exe.parent_path().parent_path() / LLAMADESK_INSTALL_LIBDIR / "llamadesk" / kCudaModuleFile};
}

struct FoundModule {
    const CudaModuleTable* table = nullptr;
    std::string why;
};

// Whether NVIDIA's driver is installed and sees a device, asked of libcuda itself. The module is
// not opened without one: loading its CUDA runtime and cuBLAS makes about 150 MB resident (measured
// on a machine without a GPU), which a CPU-only run would carry for nothing.
bool nvidia_device_present(std::string* why) {
    void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (driver == nullptr) {
        *why = "no NVIDIA driver (libcuda.so.1 is not installed)";
        return false;
    }
    using CuInit = int (*)(unsigned);
    using CuDeviceGetCount = int (*)(int*);
    const auto cu_init = reinterpret_cast<CuInit>(dlsym(driver, "cuInit"));
    const auto cu_device_get_count = reinterpret_cast<CuDeviceGetCount>(dlsym(driver, "cuDeviceGetCount"));
    int n_devices = 0;
    int error = -1;
    if (cu_init != nullptr && cu_device_get_count != nullptr && (error = cu_init(0)) == 0)
        error = cu_device_get_count(&n_devices);
    if (error != 0 || n_devices == 0) {
        dlclose(driver);
        *why = error != 0 ? "the NVIDIA driver does not start (cuInit error " + std::to_string(error) + ")"
                          : "the NVIDIA driver sees no GPU";
        return false;
    }
    return true;  // the driver stays loaded: the CUDA runtime uses it next
}

FoundModule find_module() {
    const std::vector<fs::path> candidates = module_candidates();
    std::string looked;
    for (const fs::path& path : candidates) {
        std::error_code ec;
        if (fs::exists(path, ec)) {
            FoundModule found;
            // A module the environment names is opened even so, to be checked (tests, packaging).
            if (chosen_module() == nullptr && !nvidia_device_present(&found.why)) return found;
            found.table = open_cuda_module(path.string(), &found.why);
            return found;
        }
        looked += (looked.empty() ? "" : ", ") + path.string();
    }
    return {nullptr, "the CUDA module is not installed (the llamadesk-cuda package, or a build with CUDA; looked for " +
                         (looked.empty() ? std::string(kCudaModuleFile) : looked) + ")"};
}

const FoundModule& installed_module() {
    static const FoundModule found = find_module();
    return found;
}

const CudaModuleTable& require_module() {
    const FoundModule& m = installed_module();
    if (m.table == nullptr) fail(ErrorCode::BackendUnavailable, m.why);
    return *m.table;
}

}  // namespace

const CudaModuleTable* open_cuda_module(const std::string& path, std::string* why) {
    // Opening and dlerror() share state between threads.
    static std::mutex mutex;
    std::lock_guard lock(mutex);
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
        // Most often NVIDIA's runtime is missing: dlerror names the library it could not find.
        *why = std::string("the CUDA module ") + path + " cannot be loaded: " + dlerror() +
               " (the CUDA backend needs NVIDIA's CUDA runtime and cuBLAS)";
        return nullptr;
    }
    const auto* table = static_cast<const CudaModuleTable*>(dlsym(handle, kCudaModuleSymbol));
    if (table == nullptr) {
        *why = path + " is not a LlamaDesk CUDA module (it has no " + kCudaModuleSymbol + ")";
        dlclose(handle);
        return nullptr;
    }
    if (std::strcmp(table->abi, kCudaModuleAbi) != 0 || table->layout != cuda_module_layout()) {
        *why = "the CUDA module " + path + " was built for LlamaDesk " + table->abi +
               ", not this LlamaDesk (" + kCudaModuleAbi + "); install the llamadesk-cuda package of the same version";
        dlclose(handle);
        return nullptr;
    }
    return table;
}

bool cuda_backend_available(std::string* why) {
    const FoundModule& m = installed_module();
    if (m.table == nullptr) {
        if (why) *why = m.why;
        return false;
    }
    return m.table->available(why);
}

std::unique_ptr<Backend> make_cuda_backend(const Checkpoint& ckpt, const CudaBackendOptions& opts) {
    return require_module().make_backend(ckpt, opts);
}

std::unique_ptr<Backend> make_cuda_backend_synthetic(const ModelConfig& config, WeightMix mix, uint64_t seed,
                                                     const CudaBackendOptions& opts) {
    return require_module().make_backend_synthetic(config, mix, seed, opts);
}

double cuda_copy_bandwidth() { return require_module().copy_bandwidth(); }

int64_t cuda_memory_available() {
    std::string why;
    if (!cuda_backend_available(&why)) return -1;
    return require_module().memory_available();
}

}  // namespace llamadesk
