// estimate_fit(): load()'s memory rule, applied to a model before it is loaded or downloaded.
#include "backends/backend.h"
#include "cache/kv_layout.h"
#include "core/host_memory.h"
#include "engine/context_size.h"
#include "llamadesk/engine.h"
#include "model/weight_types.h"

namespace llamadesk {

FitEstimate estimate_fit(const ModelShape& shape, BackendKind backend, KvCacheType kv_cache_type) {
    FitEstimate fit;
    // load() uses CUDA where it is usable (unless the CPU is asked for), and keeps f16 where CUDA
    // cannot hold the cache type asked for.
    const int64_t gpu = backend == BackendKind::Cpu ? -1 : cuda_memory_available();
    std::string note;
    const KvCacheType held = gpu >= 0 ? kv_cache_type_held(BackendKind::Cuda, kv_cache_type, &note) : kv_cache_type;
    fit.memory = gpu >= 0 ? "GPU memory" : "RAM";
    fit.memory_available = gpu >= 0 ? gpu : available_memory_bytes();
    const std::string room = gib(double(fit.memory_available)) + " of " + fit.memory + " available";
    // The KV pool is sized after the weights are in (Backend::kv_memory_available counts what is
    // left then).
    const int64_t rest = fit.memory_available - shape.weight_bytes;
    if (rest <= 0 || shape.context_length < 1) {
        fit.reason = "its weights take " + gib(double(shape.weight_bytes)) + "; " + room;
        return fit;
    }
    const KvLayout layout{shape.n_layers, shape.n_kv_heads, shape.head_dim, 16};
    const double bytes_per_token =
        double(weight_type(kv_dtype_of(held)).bytes(layout.block_elements())) / layout.block_size;
    LoadParams defaults;  // the context the person has not limited
    const ContextChoice context =
        choose_context(defaults, shape.context_length, bytes_per_token, rest, kv_cache_type_name(held));
    const double kv_bytes = bytes_per_token * context.n_ctx;
    if (kv_bytes > double(rest)) {
        fit.reason = "its weights take " + gib(double(shape.weight_bytes)) + " and a context of " +
                     std::to_string(context.n_ctx) + " another " + gib(kv_bytes) + "; " + room;
        return fit;
    }
    fit.fits = true;
    fit.context_length = context.n_ctx;
    fit.reason = gib(double(shape.weight_bytes)) + " of weights and a context of " + std::to_string(context.n_ctx) +
                 " (" + gib(kv_bytes) + " of " + kv_cache_type_name(held) + " KV cache) in the " + room;
    return fit;
}

}  // namespace llamadesk
