// The KV cache's element types, in one table: the name the CLI, the bench, the window's settings
// and the inspector use, the DType the kernels store, and which backends hold it. Everything else
// asks here.
#pragma once

#include <string>
#include <vector>

#include "core/backend_kind.h"
#include "model/dtype_id.h"

namespace llamadesk {

// Element type of the KV cache. F16 halves what every decode step reads from the cache, as
// llama.cpp's default does; F32 is exact against an f32 reference, at twice the memory; Q8_0
// (blocks of 32 int8 with an f16 scale, CPU only, head_dim a multiple of 32) is about half of F16.
enum class KvCacheType { F16, F32, Q8_0 };
// Every cache type, in the order a selector lists them.
const std::vector<KvCacheType>& kv_cache_types();
// "f16", "f32", "q8_0": how the CLI, the bench, the window's settings and the inspector name them.
const char* kv_cache_type_name(KvCacheType type);
// False, leaving *out alone, when name is none of those.
bool parse_kv_cache_type(const std::string& name, KvCacheType* out);

// The element type the backends store for a cache type.
DType kv_dtype_of(KvCacheType type);

// The cache types a backend of `kind` (Cpu or Cuda) holds, as stored: its constructor refuses others.
std::vector<DType> kv_dtypes_held(BackendKind kind);

// What a backend of `kind` keeps when `requested` is asked for: the type itself, or f16 where it
// cannot hold it, *note then saying so in words for the model's header line (else left empty).
KvCacheType kv_cache_type_held(BackendKind kind, KvCacheType requested, std::string* note);

}  // namespace llamadesk
