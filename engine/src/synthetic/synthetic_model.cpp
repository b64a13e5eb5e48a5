#include "synthetic/synthetic_model.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "model/parallel_for.h"
#include "model/tensor_slots.h"
#include "readers/checkpoint_storage.h"
#include "synthetic/synthetic_vocab.h"

namespace llamadesk {

namespace {

uint64_t splitmix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

struct FillTask {
    const TensorSlot* slot;
    uint64_t stream;      // RNG stream of this (tensor, chunk): same values whatever the threads
    int64_t begin, end;   // element range
};

// Uniform in [center - half_width, center + half_width): same variance as a normal of standard
// deviation half_width / sqrt(3), which is all the activations need to stay in range.
void fill(const FillTask& task, float center, float half_width) {
    const TensorView& t = *task.slot->view;
    void* data = const_cast<void*>(t.data);
    uint64_t state = task.stream;
    float block[1024];
    for (int64_t b = task.begin; b < task.end; b += 1024) {
        const int n = int(std::min<int64_t>(1024, task.end - b));
        for (int i = 0; i < n; ++i) {
            state = splitmix64(state);
            const float u = float(state >> 40) * (1.0f / 16777216.0f);  // [0, 1)
            block[i] = center + half_width * (2.0f * u - 1.0f);
        }
        const WeightType& type = weight_type(t.dtype);  // chunks are whole rows' blocks
        type.from_f32(block, static_cast<char*>(data) + type.bytes(b), n);
    }
}

}  // namespace

ModelConfig synthetic_config(const std::string& name) {
    // ModelConfig{dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len}
    if (name == "260K") return ModelConfig{64, 172, 5, 8, 4, 512, 512};
    if (name == "15M") return ModelConfig{288, 768, 6, 6, 6, 32000, 256};
    if (name == "110M") return ModelConfig{768, 2048, 12, 12, 12, 32000, 1024};
    if (name == "110M-gqa") return ModelConfig{768, 2048, 12, 12, 4, 32000, 1024};
    if (name == "7B") return ModelConfig{4096, 11008, 32, 32, 32, 32000, 4096};
    // Llama 3's: rope_theta 500000, a 128256-token vocabulary; "llama3-test" is small enough for
    // cross-checks, with widths that K-quant blocks divide and Llama 3.1's RoPE scaling (a context
    // above the scaling's original 8192, as transformers requires).
    if (name == "8B" || name == "llama3-test") {
        ModelConfig c = name == "8B" ? ModelConfig{4096, 14336, 32, 32, 8, 128256, 8192}
                                     : ModelConfig{256, 768, 2, 4, 2, 128256, 16384};
        c.rope_theta = 500000.0f;
        if (name == "llama3-test") c.rope_scaling = RopeScaling{8.0f, 1.0f, 4.0f, 8192};
        return c;
    }
    fail(ErrorCode::InvalidArgument,
         "unknown synthetic model '" + name + "' (known: 260K, 15M, 110M, 110M-gqa, 7B, 8B, llama3-test)");
}

Checkpoint make_synthetic_checkpoint(const ModelConfig& config, WeightMix mix, uint64_t seed,
                                     bool tied_classifier) {
    validate_config(config, "synthetic model");
    Checkpoint ckpt;
    ckpt.path = "synthetic";
    ckpt.format = "synthetic";
    ckpt.config = config;
    ckpt.file_type = mix.label();
    auto storage = std::make_shared<CheckpointStorage>();

    // Matrices in the mix's types, norms in F32 (as the readers deliver them).
    constexpr int64_t kChunk = 1 << 16;
    const std::vector<TensorSlot> slots = tensor_slots(config, ckpt.weights, !tied_classifier);
    std::vector<FillTask> tasks;
    for (size_t s = 0; s < slots.size(); ++s) {
        const TensorSlot& slot = slots[s];
        const DType t = mix.type_for(ConstTensorSlot{slot.name, slot.role, slot.layer, slot.rows, slot.cols},
                                     config.n_layers);
        const int64_t n = slot.rows * slot.cols;
        *slot.view = TensorView{slot.name, t, slot.rows, slot.cols, storage->allocate(size_t(weight_type(t).bytes(n)))};
        for (int64_t b = 0; b < n; b += kChunk)
            tasks.push_back({&slot, splitmix64(seed ^ splitmix64(s * 0x100000000ull + uint64_t(b / kChunk))),
                             b, std::min(n, b + kChunk)});
    }
    parallel_for(tasks.size(), [&](size_t i) {
        const TensorSlot& slot = *tasks[i].slot;
        if (slot.is_norm())
            fill(tasks[i], 1.0f, 0.1f);
        else
            fill(tasks[i], 0.0f, std::sqrt(3.0f / float(slot.cols)));
    });

    if (tied_classifier) ckpt.weights.output = ckpt.weights.token_embedding;
    ckpt.tokenizer.embedded = make_synthetic_vocab(config.vocab_size);
    ckpt.storage = std::move(storage);
    return ckpt;
}

Checkpoint make_synthetic_bpe_checkpoint(ModelConfig config, const std::vector<std::string>& merges, uint64_t seed) {
    auto vocab = std::make_shared<EmbeddedVocab>(make_bpe_vocab(merges));
    config.vocab_size = int(vocab->tokens.size());
    Checkpoint ckpt = make_synthetic_checkpoint(config, DType::F32, seed);
    ckpt.tokenizer.embedded = std::move(vocab);
    return ckpt;
}

}  // namespace llamadesk
