// One generate() call on one conversation: the user turn is added, only what the cache lacks is
// prefilled, and tokens are decoded until a stop condition.
#pragma once

#include <atomic>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "engine/sequence.h"
#include "engine/loaded_model.h"
#include "llamadesk/engine.h"

namespace llamadesk {

// The last token sampled is added to the history without being run through the model (nothing
// needs its keys and values until the next turn), and so is a Llama2Chat answer's closing EOS. A
// follow-up therefore prefills its own tokens plus that uncomputed tail: for Llama2Chat one token
// (the EOS) after an answer that ended at EOS, two after one cut short (max tokens, stop string,
// cancel); for Completion none or one. A stop string's tokens stay in the history (the cache
// holds them) although the answer text ends before it.
//
// Throws EngineError before anything changes when the turn does not fit the context
// (ContextFull) or the pool (OutOfMemory). Once decoding has begun, failures come back in the
// result's status and the partial answer stays in the history.
GenerationResult generate_answer(LoadedModel& model, Sequence& conv, const EvictionHandler& on_evicted,
                                 const std::string& user_text, const GenerateParams& params,
                                 const TokenCallback& on_token, const std::atomic<bool>* cancel);

// Reopens the last turn's answer (its closing EOS leaves the history) and decodes more of it;
// the turn's answer text grows by result.text. Throws ContextFull, changing nothing, when no
// position is left.
GenerationResult continue_answer(LoadedModel& model, Sequence& conv, const EvictionHandler& on_evicted,
                                 const GenerateParams& params, const TokenCallback& on_token,
                                 const std::atomic<bool>* cancel);

// Engine::generate_batch over conversations resolve() finds (it throws for an unknown one). Each
// step prefills one chunk of the oldest joining prompt, then runs one token of every answer under
// way in one Backend::decode_batch; admit() is asked for newcomers before each step. Making room
// for one never evicts another of the batch. An answer that fails to start has its own status and
// changes nothing; the others go on.
std::vector<GenerationResult> generate_answers(LoadedModel& model,
                                               const std::function<Sequence&(ConversationId)>& resolve,
                                               const EvictionHandler& on_evicted, std::span<const BatchRequest> requests,
                                               const BatchAdmission& admit);

}  // namespace llamadesk
