#include "cache/kv_cache_type.h"

#include <algorithm>

#include "model/weight_types.h"

namespace llamadesk {

namespace {

struct KvCacheTypeRow {
    KvCacheType type;
    DType dtype;
    bool on_cuda;  // the CUDA kernels read and write it
};

// q8_0 has no CUDA attention kernel yet.
constexpr KvCacheTypeRow kRows[] = {
    {KvCacheType::F16, DType::F16, true},
    {KvCacheType::F32, DType::F32, true},
    {KvCacheType::Q8_0, DType::Q8_0, false},
};

const KvCacheTypeRow& row_of(KvCacheType type) {
    return *std::find_if(std::begin(kRows), std::end(kRows), [type](const KvCacheTypeRow& r) { return r.type == type; });
}

bool held_by(const KvCacheTypeRow& row, BackendKind kind) { return kind != BackendKind::Cuda || row.on_cuda; }

}  // namespace

const std::vector<KvCacheType>& kv_cache_types() {
    static const std::vector<KvCacheType> types = [] {
        std::vector<KvCacheType> all;
        for (const KvCacheTypeRow& row : kRows) all.push_back(row.type);
        return all;
    }();
    return types;
}

DType kv_dtype_of(KvCacheType type) { return row_of(type).dtype; }

const char* kv_cache_type_name(KvCacheType type) { return dtype_name(kv_dtype_of(type)); }

bool parse_kv_cache_type(const std::string& name, KvCacheType* out) {
    for (const KvCacheTypeRow& row : kRows)
        if (name == dtype_name(row.dtype)) {
            *out = row.type;
            return true;
        }
    return false;
}

std::vector<DType> kv_dtypes_held(BackendKind kind) {
    std::vector<DType> held;
    for (const KvCacheTypeRow& row : kRows)
        if (held_by(row, kind)) held.push_back(row.dtype);
    return held;
}

KvCacheType kv_cache_type_held(BackendKind kind, KvCacheType requested, std::string* note) {
    note->clear();
    if (held_by(row_of(requested), kind)) return requested;
    *note = std::string("a ") + kv_cache_type_name(requested) + " KV cache is CPU only, so CUDA keeps an f16 one";
    return KvCacheType::F16;
}

}  // namespace llamadesk
