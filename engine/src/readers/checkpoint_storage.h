// What Checkpoint::storage keeps alive: the mapped files the views point into, and buffers the
// checkpoint owns (norms widened to F32, synthetic weights).
#pragma once

#include <cstdlib>
#include <memory>
#include <vector>

#include "model/checkpoint.h"

namespace llamadesk {

class MappedFile;

struct CheckpointStorage {
    std::vector<std::shared_ptr<const MappedFile>> files;  // every file the views point into
    std::vector<std::unique_ptr<void, decltype(&std::free)>> buffers;

    // An uninitialised buffer of n_bytes, 64-byte aligned, owned here.
    void* allocate(size_t n_bytes);
    // t itself when it is F32, else an F32 copy owned here (norms are always F32 in memory).
    TensorView as_f32(const TensorView& t);
};

}  // namespace llamadesk
