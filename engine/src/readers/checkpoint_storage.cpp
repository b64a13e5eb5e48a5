#include "readers/checkpoint_storage.h"

#include <new>

#include "readers/mapped_file.h"

namespace llamadesk {

void* CheckpointStorage::allocate(size_t n_bytes) {
    const size_t rounded = (n_bytes + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, rounded == 0 ? 64 : rounded);
    if (!p) throw std::bad_alloc();
    buffers.emplace_back(p, &std::free);
    return p;
}

TensorView CheckpointStorage::as_f32(const TensorView& t) {
    if (t.dtype == DType::F32) return t;
    auto* out = static_cast<float*>(allocate(size_t(t.n_elements()) * sizeof(float)));
    for (int64_t r = 0; r < t.rows; ++r) t.row_to_f32(r, out + r * t.cols);
    TensorView widened = t;
    widened.dtype = DType::F32;
    widened.data = out;
    return widened;
}

}  // namespace llamadesk
