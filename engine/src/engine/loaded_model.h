// Everything one loaded checkpoint brings: weights, tokenizer, backend and the KV pool.
#pragma once

#include <memory>

#include "backends/backend.h"
#include "cache/kv_pool.h"
#include "cache/snapshot_store.h"
#include "llamadesk/engine.h"
#include "model/checkpoint.h"
#include "tokenizer/tokenizer.h"

namespace llamadesk {

struct LoadedModel {
    // Declaration order is destruction order reversed: the backend reads the checkpoint's
    // weights, so it must go first.
    Checkpoint checkpoint;
    std::unique_ptr<Tokenizer> tokenizer;
    std::unique_ptr<Backend> backend;
    std::unique_ptr<KvPool> pool;
    std::unique_ptr<SnapshotStore> snapshots;  // null: KV snapshots are off
    ModelInfo info;

    int context_length() const { return checkpoint.config.seq_len; }
    int vocab_size() const { return checkpoint.config.vocab_size; }
};

// Opens, validates and prepares a checkpoint. Throws EngineError; nothing outside the returned
// object is touched, so a failure leaves whatever was loaded before as it was.
std::unique_ptr<LoadedModel> load_model(const LoadParams& params);

}  // namespace llamadesk
