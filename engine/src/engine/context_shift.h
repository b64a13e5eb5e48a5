// Context shift: the oldest tokens leave the model's view and the rest stay cached, as llama.cpp's
// K-shift does, instead of being computed again at their new positions.
//
// RoPE turns pair i of a key at position p by p * freq_i, so a cached key moves from p to p - n by
// a further turn of -n * freq_i; values carry no position and move as stored. Every cache type is
// handled the same way, on any backend, through the backend's block copies: each key row is read
// into f32, turned and stored back in the cache's type (f16 and q8_0 round it once more; q8_0
// quantizes the row again). The first tokens (BOS and the system prompt)
// stay where they are: StreamingLLM's attention sinks.
#pragma once

#include <span>

#include "engine/sequence.h"
#include "engine/loaded_model.h"

namespace llamadesk {

// Moves id's cached positions [keep + n, n_cached) down to [keep, n_cached - n), keys turned by
// -n positions, and cuts its cache to n_cached - n. Precondition: keep + n <= n_cached.
void shift_kv(Backend& backend, KvPool& pool, ConversationId id, int keep, int n, const RopeParams& rope);

// Drops history positions [keep, keep + n) of conv: the cache moves as shift_kv says (or, where it
// did not hold them all, is cut back to keep, to be prefilled again when next used), turns that lay
// wholly inside are forgotten, and the others' bounds move with their tokens. Returns how many
// cached positions have to be computed again: 0 when the cache held [0, keep + n).
int shift_context(LoadedModel& m, Sequence& conv, int keep, int n);

// The shift that drops conv's oldest n_turns turns as rendering the rest anew with system_prompt
// would: {keep, n} when the turn that becomes the first, rendered as a first turn, is the history's
// first keep tokens followed by its tokens as they are (Llama 3's and ChatML's system header stays
// in front; Llama 2's system prompt lives inside the first turn, so a Llama 2 conversation with one
// has no such shift), else {-1, 0}.
struct TurnShift {
    int keep = -1;
    int n = 0;
};
TurnShift turn_shift(const Tokenizer& tok, const Sequence& conv, int n_turns, const std::string& system_prompt);

}  // namespace llamadesk
