#include "backends/cpu/layer_ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "model/weight_types.h"

namespace llamadesk::cpu {

void embed(const Kernels& kernels, const TensorView& token_embedding, std::span<const int32_t> tokens, float* x) {
    const int64_t dim = token_embedding.cols;
    const int group = token_embedding.interleaved_rows;
    thread_local std::vector<uint8_t> row;  // a row read back from its group, reused per token
    row.resize(group ? size_t(token_embedding.row_bytes()) : 0);
    for (size_t t = 0; t < tokens.size(); ++t) {
        if (!group) {
            token_embedding.row_to_f32(tokens[t], x + int64_t(t) * dim);
            continue;
        }
        const int64_t first = tokens[t] / group * group;  // the group's first row
        kernels.interleaved[int(token_embedding.dtype)].deinterleave_row(token_embedding.row(first), int(tokens[t] - first),
                                                                         dim, row.data());
        weight_type(token_embedding.dtype).to_f32(row.data(), x + int64_t(t) * dim, dim);
    }
}

namespace {

// Calls fn(first_token, n_tokens) over [0, n) in parallel slices of a few tokens.
template <class F>
void for_token_slices(ThreadPool& pool, int n, F&& fn) {
    constexpr int kSlice = 8;
    pool.parallel_for((n + kSlice - 1) / kSlice, [&](int64_t slice, int) {
        const int t0 = int(slice) * kSlice;
        fn(t0, std::min(kSlice, n - t0));
    });
}

}  // namespace

void rmsnorm(ThreadPool& pool, const Kernels& kernels, const float* x, const float* weight, int n, int dim,
             float eps, float* out) {
    for_token_slices(pool, n, [&](int t0, int count) {
        for (int t = t0; t < t0 + count; ++t) {
            const float* xt = x + int64_t(t) * dim;
            float* ot = out + int64_t(t) * dim;
            const float inv_rms = 1.0f / std::sqrt(kernels.sum_squares(xt, dim) / float(dim) + eps);
            for (int i = 0; i < dim; ++i) ot[i] = xt[i] * inv_rms * weight[i];
        }
    });
}

void swiglu(ThreadPool& pool, const Kernels& kernels, float* gate, const float* up, int n, int hidden) {
    for_token_slices(pool, n, [&](int t0, int count) {
        kernels.swiglu(gate + int64_t(t0) * hidden, up + int64_t(t0) * hidden, int64_t(count) * hidden);
    });
}

void add_in_place(float* x, const float* y, int64_t count) {
    for (int64_t i = 0; i < count; ++i) x[i] += y[i];
}

Rope::Rope(int head_dim, const RopeParams& params) : head_dim_(head_dim), params_(params) {}

void Rope::cover(int n_positions) {
    const int half = head_dim_ / 2;
    const int covered = int(cos_.size() / size_t(half));
    if (n_positions <= covered) return;
    const int target = std::max(n_positions, 2 * covered);  // amortised growth
    cos_.resize(size_t(target) * size_t(half));
    sin_.resize(cos_.size());
    for (int pos = covered; pos < target; ++pos)
        for (int i = 0; i < half; ++i) {
            const double freq = rope_frequency(i, head_dim_, params_);
            const double angle = pos * freq;
            cos_[size_t(pos) * half + i] = float(std::cos(angle));
            sin_[size_t(pos) * half + i] = float(std::sin(angle));
        }
}

void Rope::apply(float* x, int n, int n_heads, int start_pos) const {
    const int half = head_dim_ / 2;
    for (int t = 0; t < n; ++t) {
        const float* c = cos_.data() + size_t(start_pos + t) * half;
        const float* s = sin_.data() + size_t(start_pos + t) * half;
        for (int h = 0; h < n_heads; ++h) {
            float* head = x + (int64_t(t) * n_heads + h) * head_dim_;
            for (int i = 0; i < half; ++i) {
                const float a = head[2 * i], b = head[2 * i + 1];
                head[2 * i] = a * c[i] - b * s[i];
                head[2 * i + 1] = a * s[i] + b * c[i];
            }
        }
    }
}

void store_kv(const Kernels& kernels, const KvStorage& kv, int layer, const float* k, const float* v, int n,
              int start_pos, BlockTableView table) {
    const KvLayout& layout = kv.layout;
    const int head_dim = layout.head_dim;
    for (int t = 0; t < n; ++t) {
        const KvSlot slot = kv_slot(table.blocks, layout.block_size, start_pos + t);
        for (int g = 0; g < layout.n_kv_heads; ++g) {
            const int64_t src = (int64_t(t) * layout.n_kv_heads + g) * head_dim;
            void* k_dst = kv.row(slot.block, layer, 0, g, slot.in_block);
            void* v_dst = kv.row(slot.block, layer, 1, g, slot.in_block);
            if (kv.dtype == DType::F16) {  // the common case, vectorized
                kernels.to_f16(k + src, static_cast<uint16_t*>(k_dst), head_dim);
                kernels.to_f16(v + src, static_cast<uint16_t*>(v_dst), head_dim);
            } else {  // f32 copies; q8_0 rounds each block of 32 to its own scale
                weight_type(kv.dtype).from_f32(k + src, k_dst, head_dim);
                weight_type(kv.dtype).from_f32(v + src, v_dst, head_dim);
            }
        }
    }
}

}  // namespace llamadesk::cpu
