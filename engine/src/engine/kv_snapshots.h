// A conversation's KV blocks to and from the model's SnapshotStore (cache/snapshot_store.h).
#pragma once

#include <memory>
#include <span>

#include "cache/snapshot_store.h"
#include "engine/sequence.h"
#include "engine/loaded_model.h"
#include "llamadesk/engine.h"

namespace llamadesk {

// The store for this model's blocks under settings.folder, or null when snapshots are off.
std::unique_ptr<SnapshotStore> open_snapshot_store(const LoadedModel& m, const SnapshotSettings& settings);

// Reads from disk the full blocks of history that come after id's cached positions and end at or
// before limit, into id's blocks (reserved, not yet written), stopping at the first block the store
// lacks or rejects (logged when it lies before known_end, the history that was there before this
// turn). Returns the positions restored; id's cached count grows by as many.
int restore_from_disk(LoadedModel& m, ConversationId id, std::span<const int32_t> history, int limit, int known_end);

// Writes conv's full cached blocks that are not on disk yet and the tokens its text stands for,
// then keeps the store within its budget. Returns the blocks written.
int save_to_disk(const LoadedModel& m, const Sequence& conv);

// Gives conv (whose text has no tokens yet) the history saved for exactly its text, when the store
// has one that fits this model's vocabulary. False, with nothing changed, otherwise.
bool restore_history(const LoadedModel& m, Sequence& conv);

}  // namespace llamadesk
