// One .safetensors file: an 8-byte header length, a JSON header naming each tensor's dtype, shape
// and byte range, then the data. Everything in the header is checked against the file before use:
// its length, known dtypes, shape x element size equal to the byte range, ranges inside the data
// and not overlapping.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/dtype.h"
#include "readers/mapped_file.h"

namespace llamadesk {

struct SafetensorsTensor {
    std::string name;
    DType dtype = DType::F32;
    std::vector<int64_t> shape;
    const uint8_t* data = nullptr;  // inside the mapping
    uint64_t n_bytes = 0;
};

struct SafetensorsFile {
    std::shared_ptr<const MappedFile> file;
    std::vector<SafetensorsTensor> tensors;  // in header order
};

// Headers above this are refused (a 405B model's shard header is well under 1 MiB).
inline constexpr uint64_t kMaxSafetensorsHeader = uint64_t(64) << 20;

SafetensorsFile read_safetensors(std::shared_ptr<const MappedFile> file);

}  // namespace llamadesk
