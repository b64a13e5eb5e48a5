#include "backends/cuda/device_model.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <random>

#include "backends/cuda/cuda_bench_support.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels.h"
#include "core/error.h"
#include "model/tensor_slots.h"

namespace llamadesk::cuda {

namespace {

constexpr int64_t kStagingElements = int64_t(16) << 20;  // 64 MiB of F32 per conversion chunk
// Blocks quantized on the host for a random matrix, then repeated: a prime number, so the run
// does not line up with rows and neighbouring rows differ.
constexpr int64_t kRandomRunBlocks = 1021;

// Writes tensor t, in type `stored`, at dst (device memory).
using FillFn = std::function<void(const TensorView& t, DType stored, char* dst)>;
// A norm weight as an F32 device vector.
using NormFn = std::function<DeviceBuffer(const TensorView& t)>;

// The tensors stacked by rows into one matrix; consecutive tensors of one stored type share a part.
DeviceMatrix stack(std::initializer_list<const TensorView*> tensors, DType activation, const FillFn& fill) {
    const TensorView& first = **tensors.begin();
    DeviceMatrix m;
    m.cols = first.cols;
    std::vector<std::vector<const TensorView*>> members;  // of each part
    for (const TensorView* t : tensors) {
        if (t->cols != first.cols)
            fail(ErrorCode::BadFormat, "tensor " + t->name + " has " + std::to_string(t->cols) + " columns, " +
                                           first.name + " has " + std::to_string(first.cols));
        const DType stored = weight_type(t->dtype).quantized() ? t->dtype : activation;
        if (m.parts.empty() || m.parts.back().dtype != stored) {
            m.parts.push_back({stored, 0, {}});
            members.emplace_back();
        }
        m.parts.back().rows += t->rows;
        members.back().push_back(t);
        m.rows += t->rows;
    }
    for (size_t p = 0; p < m.parts.size(); ++p) {
        DeviceMatrix::Part& part = m.parts[p];
        const int64_t row_bytes = weight_type(part.dtype).bytes(m.cols);
        part.data = DeviceBuffer(size_t((part.rows * row_bytes + 15) / 16 * 16), "weight " + members[p].front()->name);
        char* dst = part.data.as<char>();
        for (const TensorView* t : members[p]) {
            fill(*t, part.dtype, dst);
            dst += t->rows * row_bytes;
        }
    }
    return m;
}

int64_t device_bytes(const DeviceModel& m) {
    int64_t bytes = m.token_embedding.bytes() + int64_t(m.final_norm.bytes()) + m.output.bytes();
    for (const DeviceLayer& l : m.layers)
        bytes += int64_t(l.attention_norm.bytes() + l.ffn_norm.bytes()) + l.wqkv.bytes() + l.wo.bytes() +
                 l.w13.bytes() + l.w2.bytes();
    return bytes;
}

// The model of ckpt's tensors (their shapes and types; fill and norm provide the values).
DeviceModel assemble(const Checkpoint& ckpt, DType activation, bool separate_output, const FillFn& fill,
                     const NormFn& norm) {
    const ModelWeights& w = ckpt.weights;
    DeviceModel m;
    m.config = ckpt.config;
    m.activation_dtype = activation;
    m.token_embedding = stack({&w.token_embedding}, activation, fill);
    for (const LayerWeights& l : w.layers) {
        DeviceLayer d;
        d.attention_norm = norm(l.attention_norm);
        d.wqkv = stack({&l.wq, &l.wk, &l.wv}, activation, fill);
        d.wo = stack({&l.wo}, activation, fill);
        d.ffn_norm = norm(l.ffn_norm);
        d.w13 = stack({&l.w1, &l.w3}, activation, fill);
        d.w2 = stack({&l.w2}, activation, fill);
        m.layers.push_back(std::move(d));
    }
    m.final_norm = norm(w.final_norm);
    if (separate_output) m.output = stack({&w.output}, activation, fill);
    m.weight_bytes = device_bytes(m);
    return m;
}

// Copies host tensors into device buffers: blocks as stored, plain floats converted on the device.
class Uploader {
public:
    Uploader(int64_t total_bytes, const ProgressFn& on_progress, cudaStream_t stream)
        : total_bytes_(total_bytes), on_progress_(on_progress), stream_(stream) {}

    void upload(const TensorView& t, DType stored, char* dst) {
        if (t.dtype == stored) {
            CUDA_CHECK(cudaMemcpy(dst, t.data, size_t(t.n_bytes()), cudaMemcpyHostToDevice));
        } else {
            if (!staging_.get()) staging_ = DeviceBuffer(kStagingElements * sizeof(float), "weight conversion");
            const int64_t n = t.n_elements();
            for (int64_t begin = 0; begin < n; begin += kStagingElements) {
                const int64_t count = std::min(kStagingElements, n - begin);
                const float* src = static_cast<const float*>(t.data) + begin;
                if (t.dtype != DType::F32) {  // another 16-bit type
                    const WeightType& type = weight_type(t.dtype);
                    widened_.resize(size_t(count));
                    type.to_f32(static_cast<const char*>(t.data) + type.bytes(begin), widened_.data(), count);
                    src = widened_.data();
                }
                CUDA_CHECK(cudaMemcpyAsync(staging_.get(), src, size_t(count) * sizeof(float),
                                           cudaMemcpyHostToDevice, stream_));
                convert_from_f32(staging_.as<float>(), count, dst + weight_type(stored).bytes(begin), stored, stream_);
                // the next chunk overwrites staging_ and widened_
                CUDA_CHECK(cudaStreamSynchronize(stream_));
            }
        }
        advance(t.n_bytes());
    }

    DeviceBuffer vector_f32(const TensorView& t) {
        std::vector<float> host(size_t(t.n_elements()));
        for (int64_t r = 0; r < t.rows; ++r) t.row_to_f32(r, host.data() + r * t.cols);
        DeviceBuffer buf(host.size() * sizeof(float), "weight " + t.name);
        CUDA_CHECK(cudaMemcpy(buf.get(), host.data(), buf.bytes(), cudaMemcpyHostToDevice));
        advance(t.n_bytes());
        return buf;
    }

private:
    void advance(int64_t bytes) {
        done_bytes_ += bytes;
        if (on_progress_ && total_bytes_ > 0)
            on_progress_(float(double(done_bytes_) / double(total_bytes_)), "uploading weights to the GPU");
    }

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

// kRandomRunBlocks blocks of uniform values quantized by the reference quantizer, repeated over
// the tensor by doubling device-to-device copies.
void fill_random_blocks(char* dst, const TensorView& t, DType stored, float scale, uint64_t seed, cudaStream_t stream) {
    const WeightType& type = weight_type(stored);
    const int64_t total = type.bytes(t.n_elements());
    const int64_t run_blocks = std::min(kRandomRunBlocks, t.n_elements() / type.block_elements);
    std::vector<float> values(size_t(run_blocks * type.block_elements));
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<float> uniform(-scale, scale);
    for (float& v : values) v = uniform(rng);
    std::vector<char> run(size_t(run_blocks * type.block_bytes));
    type.from_f32(values.data(), run.data(), int64_t(values.size()));
    CUDA_CHECK(cudaMemcpyAsync(dst, run.data(), run.size(), cudaMemcpyHostToDevice, stream));
    // copying [0, n) to [done, done + n) keeps the run's period: done is a multiple of it
    for (int64_t done = int64_t(run.size()); done < total;) {
        const int64_t n = std::min(done, total - done);
        CUDA_CHECK(cudaMemcpyAsync(dst + done, dst, size_t(n), cudaMemcpyDeviceToDevice, stream));
        done += n;
    }
    CUDA_CHECK(cudaStreamSynchronize(stream));  // before `run` goes
}

}  // namespace

int64_t DeviceMatrix::bytes() const {
    int64_t bytes = 0;
    for (const Part& p : parts) bytes += int64_t(p.data.bytes());
    return bytes;
}

int64_t DeviceModel::largest_block_part() const {
    int64_t largest = 0;
    auto visit = [&](const DeviceMatrix& m) {
        for (const DeviceMatrix::Part& p : m.parts)
            if (weight_type(p.dtype).quantized()) largest = std::max(largest, p.rows * m.cols);
    };
    visit(token_embedding);
    visit(output);
    for (const DeviceLayer& l : layers) {
        visit(l.wqkv);
        visit(l.wo);
        visit(l.w13);
        visit(l.w2);
    }
    return largest;
}

DeviceModel upload_model(const Checkpoint& ckpt, DType activation, const ProgressFn& on_progress,
                         cudaStream_t stream) {
    Uploader up(checkpoint_bytes(ckpt), on_progress, stream);
    DeviceModel m = assemble(
        ckpt, activation, !ckpt.weights.classifier_tied(),
        [&](const TensorView& t, DType stored, char* dst) { up.upload(t, stored, dst); },
        [&](const TensorView& t) { return up.vector_f32(t); });
    // plain cudaMemcpy from pageable memory may return before its data lands; the backend's
    // stream is not ordered after it
    CUDA_CHECK(cudaDeviceSynchronize());
    return m;
}

DeviceModel random_model(const ModelConfig& c, WeightMix mix, uint64_t seed, cudaStream_t stream) {
    const Checkpoint shapes = synthetic_shapes(c, mix);
    bool blocks = false;
    for (const auto& [t, n] : shapes.matrix_types()) blocks = blocks || weight_type(t).quantized();
    const DType activation = blocks ? DType::F16 : mix.base;
    uint64_t tensor_seed = seed;
    DeviceModel m = assemble(
        shapes, activation, true,
        [&](const TensorView& t, DType stored, char* dst) {
            const float scale = 1.0f / std::sqrt(float(t.cols));
            tensor_seed += 0x9e3779b97f4a7c15ull;
            if (weight_type(stored).quantized())
                fill_random_blocks(dst, t, stored, scale, tensor_seed, stream);
            else
                fill_random(dst, t.n_elements(), stored, scale, tensor_seed, stream);
        },
        [&](const TensorView& t) {
            DeviceBuffer buf(size_t(t.n_elements()) * sizeof(float), "weight " + t.name);
            fill_f32(buf.as<float>(), t.n_elements(), 1.0f, stream);
            return buf;
        });
    CUDA_CHECK(cudaStreamSynchronize(stream));
    return m;
}

}  // namespace llamadesk::cuda
