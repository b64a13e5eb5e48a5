// Host-side helpers for the kernel tests: random tensors in any dtype (keeping the exact values
// the device will see), device copies, NaN poisoning and error measures.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "backends/cuda/device_buffer.h"
#include "model/weight_types.h"

namespace llamadesk::test {

// Values rounded to dtype: `bytes` is what the device gets, `values` the same numbers as F32.
struct HostTensor {
    DType dtype = DType::F32;
    std::vector<uint8_t> bytes;
    std::vector<float> values;
};

HostTensor random_tensor(size_t n, DType dtype, std::mt19937_64& rng, float scale = 1.0f);
HostTensor to_dtype(const std::vector<float>& values, DType dtype);  // rounds; NaN stays NaN
float round_to(float x, DType dtype);

cuda::DeviceBuffer upload(const void* data, size_t bytes);
template <typename T> cuda::DeviceBuffer upload(const std::vector<T>& v) {
    return upload(v.data(), v.size() * sizeof(T));
}
// A buffer whose every byte is 0xff: NaN as F32, F16 and BF16, so unwritten elements show.
cuda::DeviceBuffer poisoned(size_t bytes);
std::vector<float> download_f32(const cuda::DeviceBuffer& b, size_t n);
// n elements of dtype, widened to F32
std::vector<float> download_as_f32(const cuda::DeviceBuffer& b, size_t n, DType dtype);

// ||a - b|| / ||b||, infinity when any element of a is NaN
double relative_error(const std::vector<float>& a, const std::vector<float>& b);

}  // namespace llamadesk::test
