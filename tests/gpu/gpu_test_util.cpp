#include "gpu_test_util.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "backends/cuda/cuda_check.h"

namespace llamadesk::test {

float round_to(float x, DType dtype) {
    switch (dtype) {
    case DType::F32: return x;
    case DType::F16: return f16_to_f32(f32_to_f16(x));
    case DType::BF16: return bf16_to_f32(f32_to_bf16(x));
    default: break;  // plain floats only
    }
    return x;
}

HostTensor to_dtype(const std::vector<float>& values, DType dtype) {
    HostTensor t;
    t.dtype = dtype;
    t.bytes.resize(size_t(weight_type(dtype).bytes(int64_t(values.size()))));
    t.values.resize(values.size());
    for (size_t i = 0; i < values.size(); ++i) {
        const float x = values[i];
        if (dtype == DType::F32) {
            std::memcpy(&t.bytes[i * 4], &x, 4);
        } else {
            uint16_t h = std::isnan(x) ? uint16_t(0xffff)
                         : dtype == DType::F16 ? f32_to_f16(x) : f32_to_bf16(x);
            std::memcpy(&t.bytes[i * 2], &h, 2);
        }
        t.values[i] = std::isnan(x) ? x : round_to(x, dtype);
    }
    return t;
}

HostTensor random_tensor(size_t n, DType dtype, std::mt19937_64& rng, float scale) {
    std::normal_distribution<float> normal(0.0f, scale);
    std::vector<float> v(n);
    for (float& x : v) x = normal(rng);
    return to_dtype(v, dtype);
}

cuda::DeviceBuffer upload(const void* data, size_t bytes) {
    cuda::DeviceBuffer b(bytes, "test input");
    CUDA_CHECK(cudaMemcpy(b.get(), data, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaDeviceSynchronize());  // the kernels run on another (non-blocking) stream
    return b;
}

cuda::DeviceBuffer poisoned(size_t bytes) {
    cuda::DeviceBuffer b(bytes, "test output");
    CUDA_CHECK(cudaMemset(b.get(), 0xff, bytes));
    CUDA_CHECK(cudaDeviceSynchronize());  // cudaMemset is asynchronous; the kernels use another stream
    return b;
}

std::vector<float> download_f32(const cuda::DeviceBuffer& b, size_t n) {
    return download_as_f32(b, n, DType::F32);
}

std::vector<float> download_as_f32(const cuda::DeviceBuffer& b, size_t n, DType dtype) {
    std::vector<uint8_t> raw(size_t(weight_type(dtype).bytes(int64_t(n))));
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(raw.data(), b.get(), raw.size(), cudaMemcpyDeviceToHost));
    std::vector<float> out(n);
    for (size_t i = 0; i < n; ++i) out[i] = load_as_f32(raw.data(), dtype, i);
    return out;
}

double relative_error(const std::vector<float>& a, const std::vector<float>& b) {
    double diff = 0.0, norm = 0.0;
    for (size_t i = 0; i < a.size(); ++i) {
        if (std::isnan(a[i])) return std::numeric_limits<double>::infinity();
        diff += double(a[i] - b[i]) * double(a[i] - b[i]);
        norm += double(b[i]) * double(b[i]);
    }
    return std::sqrt(diff / std::max(norm, 1e-30));
}

}  // namespace llamadesk::test
