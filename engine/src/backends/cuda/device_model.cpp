#include "backends/cuda/device_model.h"

#include <cmath>
#include <initializer_list>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels.h"
#include "core/error.h"
#include "model/tensor_slots.h"

namespace llamadesk::cuda {

namespace {

constexpr int64_t kStagingElements = int64_t(16) << 20;  // 64 MiB of F32 per conversion chunk

// Copies host tensors into device buffers, converting to the target dtype on the device.
class Uploader {
public:
    Uploader(DType target, int64_t total_bytes, const ProgressFn& on_progress, cudaStream_t stream)
        : target_(target), total_bytes_(total_bytes), on_progress_(on_progress), stream_(stream) {}

    // parts stacked by rows into one (sum of rows, cols) matrix in the target dtype
    DeviceBuffer matrix(std::initializer_list<const TensorView*> parts) {
        const TensorView& first = **parts.begin();
        int64_t rows = 0;
        for (const TensorView* t : parts) {
            if (t->cols != first.cols)
                fail(ErrorCode::BadFormat, "tensor " + t->name + " has " + std::to_string(t->cols) +
                                               " columns, " + first.name + " has " +
                                               std::to_string(first.cols));
            rows += t->rows;
        }
        const size_t row_bytes = size_t(weight_type(target_).bytes(first.cols));
        DeviceBuffer buf(size_t(rows) * row_bytes, "weight " + first.name);
        char* dst = buf.as<char>();
        for (const TensorView* t : parts) {
            upload(*t, dst);
            dst += size_t(t->rows) * row_bytes;
        }
        return buf;
    }

    // a norm weight, always F32
    DeviceBuffer vector_f32(const TensorView& t) {
        std::vector<float> host(size_t(t.n_elements()));
        for (int64_t r = 0; r < t.rows; ++r) t.row_to_f32(r, host.data() + r * t.cols);
        DeviceBuffer buf(host.size() * sizeof(float), "weight " + t.name);
        CUDA_CHECK(cudaMemcpy(buf.get(), host.data(), buf.bytes(), cudaMemcpyHostToDevice));
        advance(t.n_bytes());
        return buf;
    }

private:
    void upload(const TensorView& t, char* dst) {
        if (t.dtype == target_) {
            CUDA_CHECK(cudaMemcpy(dst, t.data, size_t(t.n_bytes()), cudaMemcpyHostToDevice));
        } else {
            if (!staging_.get()) staging_ = DeviceBuffer(kStagingElements * sizeof(float), "weight conversion");
            const int64_t n = t.n_elements();
            for (int64_t begin = 0; begin < n; begin += kStagingElements) {
                const int64_t count = std::min(kStagingElements, n - begin);
                const float* src = static_cast<const float*>(t.data) + begin;
                if (t.dtype != DType::F32) {  // another 16-bit type, or blocks (chunks hold whole blocks)
                    const WeightType& type = weight_type(t.dtype);
                    widened_.resize(size_t(count));
                    type.to_f32(static_cast<const char*>(t.data) + type.bytes(begin), widened_.data(), count);
                    src = widened_.data();
                }
                CUDA_CHECK(cudaMemcpyAsync(staging_.get(), src, size_t(count) * sizeof(float),
                                           cudaMemcpyHostToDevice, stream_));
                convert_from_f32(staging_.as<float>(), count,
                                 dst + weight_type(target_).bytes(begin), target_, stream_);
                // the next chunk overwrites staging_ and widened_
                CUDA_CHECK(cudaStreamSynchronize(stream_));
            }
        }
        advance(t.n_bytes());
    }

    void advance(int64_t bytes) {
        done_bytes_ += bytes;
        if (on_progress_ && total_bytes_ > 0)
            on_progress_(float(double(done_bytes_) / double(total_bytes_)), "uploading weights to the GPU");
    }

    DType target_;
    int64_t total_bytes_;
    int64_t done_bytes_ = 0;
    const ProgressFn& on_progress_;
    cudaStream_t stream_;
    DeviceBuffer staging_;         // (kStagingElements,) F32
    std::vector<float> widened_;   // host F32 copy of a chunk of a 16-bit tensor
};

// What upload_model copies, for its progress: every tensor once, the tied classifier not again.
int64_t checkpoint_bytes(const Checkpoint& ckpt) {
    const ModelWeights& w = ckpt.weights;
    int64_t bytes = 0;
    for (const ConstTensorSlot& s : tensor_slots(ckpt.config, w, !w.classifier_tied()))
        bytes += s.view->n_bytes();
    return bytes;
}

int64_t device_bytes(const DeviceModel& m) {
    int64_t bytes = int64_t(m.token_embedding.bytes() + m.final_norm.bytes() + m.output.bytes());
    for (const DeviceLayer& l : m.layers)
        bytes += int64_t(l.attention_norm.bytes() + l.wqkv.bytes() + l.wo.bytes() + l.ffn_norm.bytes() +
                         l.w13.bytes() + l.w2.bytes());
    return bytes;
}

}  // namespace

DeviceModel upload_model(const Checkpoint& ckpt, DType target, const ProgressFn& on_progress,
                         cudaStream_t stream) {
    const ModelWeights& w = ckpt.weights;
    DeviceModel m;
    m.config = ckpt.config;
    m.dtype = target;
    Uploader up(target, checkpoint_bytes(ckpt), on_progress, stream);
    m.token_embedding = up.matrix({&w.token_embedding});
    for (const LayerWeights& l : w.layers) {
        DeviceLayer d;
        d.attention_norm = up.vector_f32(l.attention_norm);
        d.wqkv = up.matrix({&l.wq, &l.wk, &l.wv});
        d.wo = up.matrix({&l.wo});
        d.ffn_norm = up.vector_f32(l.ffn_norm);
        d.w13 = up.matrix({&l.w1, &l.w3});
        d.w2 = up.matrix({&l.w2});
        m.layers.push_back(std::move(d));
    }
    m.final_norm = up.vector_f32(w.final_norm);
    if (!w.classifier_tied()) m.output = up.matrix({&w.output});
    // plain cudaMemcpy from pageable memory may return before its data lands; the backend's
    // stream is not ordered after it
    CUDA_CHECK(cudaDeviceSynchronize());
    m.weight_bytes = device_bytes(m);
    return m;
}

DeviceModel random_model(const ModelConfig& c, DType dtype, uint64_t seed, cudaStream_t stream) {
    DeviceModel m;
    m.config = c;
    m.dtype = dtype;
    uint64_t tensor_seed = seed;
    auto matrix = [&](int64_t rows, int64_t cols, const std::string& what) {
        DeviceBuffer buf(size_t(weight_type(dtype).bytes(rows * cols)), what);
        fill_random(buf.get(), rows * cols, dtype, 1.0f / std::sqrt(float(cols)),
                    tensor_seed += 0x9e3779b97f4a7c15ull, stream);
        return buf;
    };
    auto ones = [&](int64_t n, const std::string& what) {
        DeviceBuffer buf(size_t(n) * sizeof(float), what);
        fill_f32(buf.as<float>(), n, 1.0f, stream);
        return buf;
    };
    const int64_t dim = c.dim, q_dim = int64_t(c.n_heads) * c.head_dim(), kv_dim = c.kv_dim();
    m.token_embedding = matrix(c.vocab_size, dim, "token embedding");
    for (int i = 0; i < c.n_layers; ++i) {
        DeviceLayer d;
        d.attention_norm = ones(dim, "attention norm");
        d.wqkv = matrix(q_dim + 2 * kv_dim, dim, "wqkv");
        d.wo = matrix(dim, q_dim, "wo");
        d.ffn_norm = ones(dim, "ffn norm");
        d.w13 = matrix(2 * int64_t(c.hidden_dim), dim, "w13");
        d.w2 = matrix(dim, c.hidden_dim, "w2");
        m.layers.push_back(std::move(d));
    }
    m.final_norm = ones(dim, "final norm");
    m.output = matrix(c.vocab_size, dim, "classifier");
    CUDA_CHECK(cudaStreamSynchronize(stream));
    m.weight_bytes = device_bytes(m);
    return m;
}

}  // namespace llamadesk::cuda
