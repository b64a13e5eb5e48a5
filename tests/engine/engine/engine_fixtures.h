// Helpers shared by the engine tests: synthetic checkpoints on disk, parameter presets and
// small wrappers that turn a failed Status into a test failure.
#pragma once

#include <QString>
#include <QTemporaryDir>

#include <string>

#include "llamadesk/engine.h"
#include "model/model_config.h"

namespace llamadesk::test {

// The text stories260K writes greedily from BOS or from "Once upon a time", as published with
// the model (quoted in ../shared/README.md).
inline const std::string kStories260KGreedy =
    "Once upon a time, there was a little girl named Lily. She loved to play outside in the park. "
    "One day, she saw a big, red ball. She wanted to play with it, but it was too high.";

ModelConfig small_config(int n_heads, int n_kv_heads, int head_dim, int seq_len);

// Writes a synthetic model (random weights, byte-level vocabulary) as GGUF into dir and returns
// its path.
QString write_synthetic_gguf(const QTemporaryDir& dir, const QString& name, const ModelConfig& config,
                             uint64_t seed);

LoadParams load_params(const QString& path, int64_t kv_cache_bytes = 0);

// Seeded sampling (so the whole sampler runs) and a fixed token budget.
GenerateParams sampled(int max_new_tokens, int64_t seed = 42);
GenerateParams greedy(int max_new_tokens);

}  // namespace llamadesk::test

// QVERIFY2 on a Status, showing its message.
#define LLAMADESK_VERIFY_OK(expr)                                                              \
    do {                                                                                       \
        const ::llamadesk::Status s_ = (expr);                                                 \
        QVERIFY2(s_.ok(), qPrintable(QString("%1: %2").arg(::llamadesk::error_code_name(s_.code), \
                                                           QString::fromStdString(s_.message)))); \
    } while (0)
