// Model transformations for accuracy tests: a wider copy of a model that computes the same
// function (so a real small model gets rows that K-quants' 256-element blocks fit), and a copy with
// its matrices re-stored in a WeightMix's types by the reference quantizers.
#pragma once

#include "model/checkpoint.h"
#include "model/weight_mix.h"

namespace llamadesk {

// The model with dim new_dim and hidden_dim new_hidden, in F32, whose logits equal the original's:
// new attention heads (same head_dim, same query heads per kv head) with zero q/k/v rows and zero
// wo columns, new FFN units with zero w1/w3 rows and w2 columns, new residual dimensions that stay
// zero (zero embedding and wo/w2 columns). RMSNorm sees a mean square D/D' times the original's
// (D = dim, D' = new_dim), so every norm weight is scaled by sqrt(D/D') and eps by D/D':
//   w sqrt(D/D') x / sqrt(D/D' (ms + eps)) = w x / sqrt(ms + eps).
// Throws EngineError(InvalidArgument) when new_dim is not a multiple of head_dim giving a whole
// number of kv heads, or either size shrinks.
Checkpoint widen_checkpoint(const Checkpoint& ckpt, int new_dim, int new_hidden);

// The same model with every matrix converted to F32 and stored in mix.type_for(slot)'s type (norms
// stay F32); file_type is the mix's label. Owns its storage.
Checkpoint store_in_mix(const Checkpoint& ckpt, WeightMix mix);

}  // namespace llamadesk
