#include "backends/backend.h"

#include "sampling/sampler.h"

namespace llamadesk {

int32_t Backend::decode_and_sample(int32_t token, int pos, BlockTableView table, Sampler& sampler,
                                   std::span<const int32_t> recent_tokens) {
    decode_logits_.resize(size_t(sampler.vocab_size()));
    forward(std::span<const int32_t>(&token, 1), pos, table, decode_logits_.data());
    return sampler.sample(decode_logits_.data(), recent_tokens);
}

}  // namespace llamadesk
