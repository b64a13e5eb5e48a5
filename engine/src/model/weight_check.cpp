// validate_weights(): shapes against the config, and a scan for NaN/Inf. The scan reads every
// byte of every tensor, so it also faults a memory-mapped checkpoint into memory, in parallel.
#include <algorithm>
#include <atomic>
#include <cstring>

#include "core/error.h"
#include "model/checkpoint.h"
#include "model/parallel_for.h"
#include "model/tensor_slots.h"

namespace llamadesk {

namespace {

struct Chunk {
    const TensorView* tensor;
    int64_t begin, end;  // element range
};

// Exponent bits all ones means Inf (mantissa 0) or NaN.
template <typename Bits>
bool chunk_all_finite(const Bits* x, int64_t begin, int64_t end, Bits exp_mask) {
    Bits any_bad = 0;
    for (int64_t i = begin; i < end; ++i) any_bad |= Bits((x[i] & exp_mask) == exp_mask);
    return any_bad == 0;
}

// The first non-finite element of a chunk known to hold one: its index and "NaN" or "Inf".
template <typename Bits>
std::string describe_first_bad(const TensorView& t, const Bits* x, int64_t begin, int64_t end,
                               Bits exp_mask) {
    for (int64_t i = begin; i < end; ++i) {
        if ((x[i] & exp_mask) != exp_mask) continue;
        const bool is_nan = (x[i] & Bits(~exp_mask) & Bits(~(Bits(1) << (sizeof(Bits) * 8 - 1)))) != 0;
        return "tensor " + t.name + " contains " + (is_nan ? "NaN" : "Inf") + " at element " +
               std::to_string(i);
    }
    return {};
}

// A block type's values are finite when its f16 scales are: the rest are small integers.
std::string scan_blocks(const TensorView& t, int64_t begin, int64_t end) {
    const WeightType& w = weight_type(t.dtype);
    const auto* blocks = static_cast<const uint8_t*>(t.data);
    for (int64_t b = begin / w.block_elements; b < end / w.block_elements; ++b)
        for (const int16_t offset : w.f16_scales) {
            if (offset < 0) continue;
            uint16_t h;
            std::memcpy(&h, blocks + b * w.block_bytes + offset, 2);
            if ((h & 0x7c00u) == 0x7c00u)
                return "tensor " + t.name + " has a " + ((h & 0x3ffu) ? "NaN" : "Inf") + " scale in block " +
                       std::to_string(b) + " (elements " + std::to_string(b * w.block_elements) + " to " +
                       std::to_string((b + 1) * w.block_elements - 1) + ")";
        }
    return {};
}

// Empty when the chunk is all finite, else the message.
std::string scan_chunk(const Chunk& c) {
    const TensorView& t = *c.tensor;
    if (weight_type(t.dtype).quantized()) return scan_blocks(t, c.begin, c.end);
    switch (t.dtype) {
    case DType::F32: {
        const auto* x = static_cast<const uint32_t*>(t.data);
        if (chunk_all_finite<uint32_t>(x, c.begin, c.end, 0x7f800000u)) return {};
        return describe_first_bad<uint32_t>(t, x, c.begin, c.end, 0x7f800000u);
    }
    case DType::F16: {
        const auto* x = static_cast<const uint16_t*>(t.data);
        if (chunk_all_finite<uint16_t>(x, c.begin, c.end, 0x7c00u)) return {};
        return describe_first_bad<uint16_t>(t, x, c.begin, c.end, 0x7c00u);
    }
    case DType::BF16: {
        const auto* x = static_cast<const uint16_t*>(t.data);
        if (chunk_all_finite<uint16_t>(x, c.begin, c.end, 0x7f80u)) return {};
        return describe_first_bad<uint16_t>(t, x, c.begin, c.end, 0x7f80u);
    }
    default: break;
    }
    return "tensor " + t.name + " has an unknown dtype";
}

}  // namespace

void validate_shapes(const Checkpoint& ckpt) {
    // Slots over a copy, which tensor_slots sizes to the config's layer count: a layer the reader
    // left out is then reported as its missing tensors.
    ModelWeights copy = ckpt.weights;
    for (const TensorSlot& s : tensor_slots(ckpt.config, copy, true)) {
        const TensorView& t = *s.view;
        if (t.data == nullptr)
            fail(ErrorCode::BadFormat, ckpt.path + ": tensor " + s.name + " is missing");
        if (t.rows != s.rows || t.cols != s.cols)
            fail(ErrorCode::BadFormat,
                 ckpt.path + ": tensor " + t.name + " has shape (" + std::to_string(t.rows) + ", " +
                     std::to_string(t.cols) + "), the model's hyper-parameters imply (" +
                     std::to_string(s.rows) + ", " + std::to_string(s.cols) + ")");
    }
    if (ckpt.weights.layers.size() != size_t(ckpt.config.n_layers))
        fail(ErrorCode::BadFormat, ckpt.path + ": layer count does not match n_layers");
}

void validate_weights(const Checkpoint& ckpt) {
    validate_shapes(ckpt);

    constexpr int64_t kChunkElements = int64_t(1) << 20;  // a multiple of every block
    const ModelWeights& w = ckpt.weights;
    std::vector<Chunk> chunks;
    for (const ConstTensorSlot& s : tensor_slots(ckpt.config, w, !w.classifier_tied())) {
        const TensorView* t = s.view;
        for (int64_t b = 0; b < t->n_elements(); b += kChunkElements)
            chunks.push_back({t, b, std::min(t->n_elements(), b + kChunkElements)});
    }

    // The error reported is the one of the earliest chunk, so the message does not depend on
    // thread timing; chunks after a known error are skipped.
    std::atomic<size_t> first_bad{chunks.size()};
    std::vector<std::string> messages(chunks.size());
    parallel_for(chunks.size(), [&](size_t i) {
        if (i > first_bad.load()) return;
        std::string m = scan_chunk(chunks[i]);
        if (m.empty()) return;
        messages[i] = std::move(m);
        size_t cur = first_bad.load();
        while (i < cur && !first_bad.compare_exchange_weak(cur, i)) {}
    });

    if (first_bad.load() < chunks.size())
        fail(ErrorCode::BadFormat, ckpt.path + ": " + messages[first_bad.load()]);
}

}  // namespace llamadesk
