#include "model/model_config.h"

#include <cmath>

#include "core/error.h"

namespace llamadesk {

namespace {

// Upper bounds far above any Llama-2-family model (7B: dim 4096, 32 layers, 32000 tokens) yet low
// enough that products of them cannot overflow 64-bit sizes.
constexpr int kMaxDim = 1 << 16;
constexpr int kMaxHiddenDim = 1 << 18;
constexpr int kMaxLayers = 1024;
constexpr int kMaxHeads = 1024;
constexpr int kMaxVocab = 1 << 22;
constexpr int kMaxSeqLen = 1 << 21;

void check_range(const std::string& source, const char* field, int value, int lo, int hi) {
    if (value < lo || value > hi)
        fail(ErrorCode::BadFormat, source + ": " + field + " is " + std::to_string(value) +
                                       ", expected " + std::to_string(lo) + ".." + std::to_string(hi));
}

}  // namespace

void validate_config(const ModelConfig& c, const std::string& source) {
    check_range(source, "dim", c.dim, 1, kMaxDim);
    check_range(source, "hidden_dim", c.hidden_dim, 1, kMaxHiddenDim);
    check_range(source, "n_layers", c.n_layers, 1, kMaxLayers);
    check_range(source, "n_heads", c.n_heads, 1, kMaxHeads);
    check_range(source, "n_kv_heads", c.n_kv_heads, 1, kMaxHeads);
    check_range(source, "vocab_size", c.vocab_size, 1, kMaxVocab);
    check_range(source, "seq_len", c.seq_len, 1, kMaxSeqLen);
    if (c.dim % c.n_heads != 0)
        fail(ErrorCode::BadFormat, source + ": n_heads (" + std::to_string(c.n_heads) +
                                       ") does not divide dim (" + std::to_string(c.dim) + ")");
    if (c.n_heads % c.n_kv_heads != 0)
        fail(ErrorCode::BadFormat, source + ": n_kv_heads (" + std::to_string(c.n_kv_heads) +
                                       ") does not divide n_heads (" + std::to_string(c.n_heads) + ")");
    if (c.head_dim() % 2 != 0)  // rotary embeddings turn pairs of elements
        fail(ErrorCode::BadFormat, source + ": head dimension " + std::to_string(c.head_dim()) +
                                       " (dim / n_heads) is odd; rotary embeddings need pairs");
    if (!std::isfinite(c.rope_theta) || c.rope_theta <= 1.0f)
        fail(ErrorCode::BadFormat, source + ": rope_theta " + std::to_string(c.rope_theta) +
                                       " must be a finite number above 1");
    const RopeScaling& s = c.rope_scaling;
    if (s.enabled() && !(std::isfinite(s.factor) && s.factor >= 1.0f && s.factor <= 1024.0f &&
                         std::isfinite(s.low_freq_factor) && std::isfinite(s.high_freq_factor) &&
                         s.low_freq_factor > 0.0f && s.high_freq_factor > s.low_freq_factor &&
                         s.original_context >= 1 && s.original_context <= kMaxSeqLen))
        fail(ErrorCode::BadFormat, source + ": RoPE scaling factor " + std::to_string(s.factor) + ", low_freq_factor " +
                                       std::to_string(s.low_freq_factor) + ", high_freq_factor " +
                                       std::to_string(s.high_freq_factor) + ", original context " +
                                       std::to_string(s.original_context) +
                                       " is out of range (factor 1 to 1024, 0 < low < high, context 1 to " +
                                       std::to_string(kMaxSeqLen) + ")");
    if (!std::isfinite(c.norm_eps) || c.norm_eps <= 0.0f || c.norm_eps > 0.1f)
        fail(ErrorCode::BadFormat, source + ": norm_eps " + std::to_string(c.norm_eps) +
                                       " must be in (0, 0.1]");
}

}  // namespace llamadesk
