#include "reference_transformer.h"

#include "model/weight_types.h"

#include <algorithm>
#include <cmath>

namespace llamadesk::test {

namespace {

float at(const TensorView& t, int64_t r, int64_t c) { return load_as_f32(t.row(r), t.dtype, c); }

// out (d) = W (d, n) x (n). Each row is made f32 once: element by element, a K-quant block of 256
// was decoded 256 times, which made a q4_k_m row of test_cpu_backend take 134 s under ASan.
std::vector<float> matmul(const TensorView& w, const std::vector<float>& x) {
    std::vector<float> out(size_t(w.rows)), row(size_t(w.cols));
    for (int64_t i = 0; i < w.rows; ++i) {
        w.row_to_f32(i, row.data());
        double sum = 0.0;
        for (int64_t j = 0; j < w.cols; ++j) sum += double(row[size_t(j)]) * x[size_t(j)];
        out[size_t(i)] = float(sum);
    }
    return out;
}

std::vector<float> rmsnorm(const std::vector<float>& x, const TensorView& weight, float eps) {
    double ss = 0.0;
    for (float v : x) ss += double(v) * v;
    const float inv = float(1.0 / std::sqrt(ss / double(x.size()) + eps));
    std::vector<float> out(x.size());
    for (size_t i = 0; i < x.size(); ++i) out[i] = x[i] * inv * at(weight, 0, int64_t(i));
    return out;
}

// Rotates each pair (2i, 2i+1) of each head by pos * theta^(-2i / head_dim).
void rope(std::vector<float>& x, int head_dim, int pos, float theta) {
    for (size_t base = 0; base < x.size(); base += size_t(head_dim))
        for (int i = 0; i < head_dim; i += 2) {
            const double angle = pos * std::pow(double(theta), -double(i) / head_dim);
            const float c = float(std::cos(angle)), s = float(std::sin(angle));
            const float a = x[base + size_t(i)], b = x[base + size_t(i) + 1];
            x[base + size_t(i)] = a * c - b * s;
            x[base + size_t(i) + 1] = a * s + b * c;
        }
}

}  // namespace

ReferenceTransformer::ReferenceTransformer(const Checkpoint& ckpt, DType kv_dtype)
    : ckpt_(ckpt),
      kv_dtype_(kv_dtype),
      key_cache_(size_t(ckpt.config.n_layers) * ckpt.config.seq_len * ckpt.config.kv_dim()),
      value_cache_(key_cache_.size()) {}

std::vector<float> ReferenceTransformer::forward(int token, int pos) {
    const ModelConfig& c = ckpt_.config;
    const ModelWeights& w = ckpt_.weights;
    const int head_dim = c.head_dim(), kv_dim = c.kv_dim(), n_rep = c.n_rep();

    std::vector<float> x(size_t(c.dim));
    for (int i = 0; i < c.dim; ++i) x[size_t(i)] = at(w.token_embedding, token, i);

    for (int l = 0; l < c.n_layers; ++l) {
        const LayerWeights& lw = w.layers[size_t(l)];
        // attention
        std::vector<float> xb = rmsnorm(x, lw.attention_norm, c.norm_eps);
        std::vector<float> q = matmul(lw.wq, xb), k = matmul(lw.wk, xb), v = matmul(lw.wv, xb);
        rope(q, head_dim, pos, c.rope_theta);
        rope(k, head_dim, pos, c.rope_theta);
        float* key_row = key_cache_.data() + (size_t(l) * c.seq_len + pos) * kv_dim;
        float* value_row = value_cache_.data() + (size_t(l) * c.seq_len + pos) * kv_dim;
        for (int i = 0; i < kv_dim; ++i) {
            key_row[i] = k[size_t(i)];
            value_row[i] = v[size_t(i)];
        }
        if (kv_dtype_ != DType::F32) {  // what the cache keeps: each row rounded to its type
            std::vector<uint8_t> bytes(size_t(weight_type(kv_dtype_).bytes(kv_dim)));
            for (float* row : {key_row, value_row}) {
                weight_type(kv_dtype_).from_f32(row, bytes.data(), kv_dim);
                weight_type(kv_dtype_).to_f32(bytes.data(), row, kv_dim);
            }
        }
        std::vector<float> att_out(size_t(c.dim), 0.0f);
        for (int h = 0; h < c.n_heads; ++h) {
            const int kv_head = h / n_rep;
            std::vector<double> scores(size_t(pos) + 1);
            double max_score = -INFINITY;
            for (int t = 0; t <= pos; ++t) {
                const float* key = key_cache_.data() + (size_t(l) * c.seq_len + t) * kv_dim + kv_head * head_dim;
                double s = 0.0;
                for (int d = 0; d < head_dim; ++d) s += double(q[size_t(h * head_dim + d)]) * key[d];
                scores[size_t(t)] = s / std::sqrt(double(head_dim));
                max_score = std::max(max_score, scores[size_t(t)]);
            }
            double sum = 0.0;
            for (double& s : scores) sum += (s = std::exp(s - max_score));
            for (int t = 0; t <= pos; ++t) {
                const float* value = value_cache_.data() + (size_t(l) * c.seq_len + t) * kv_dim + kv_head * head_dim;
                for (int d = 0; d < head_dim; ++d)
                    att_out[size_t(h * head_dim + d)] += float(scores[size_t(t)] / sum * value[d]);
            }
        }
        std::vector<float> o = matmul(lw.wo, att_out);
        for (int i = 0; i < c.dim; ++i) x[size_t(i)] += o[size_t(i)];

        // feed-forward: w2(silu(w1 x) * w3 x)
        xb = rmsnorm(x, lw.ffn_norm, c.norm_eps);
        std::vector<float> gate = matmul(lw.w1, xb), up = matmul(lw.w3, xb);
        for (size_t i = 0; i < gate.size(); ++i) gate[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
        std::vector<float> down = matmul(lw.w2, gate);
        for (int i = 0; i < c.dim; ++i) x[size_t(i)] += down[size_t(i)];
    }
    return matmul(w.output, rmsnorm(x, w.final_norm, c.norm_eps));
}

}  // namespace llamadesk::test
