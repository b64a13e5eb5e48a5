// One generate() call on one conversation: the user turn is added, only what the cache lacks is
// prefilled, and tokens are decoded until a stop condition.
#pragma once

#include <atomic>
#include <string>

#include "engine/kv_pool.h"
#include "engine/loaded_model.h"
#include "llamadesk/engine.h"

namespace llamadesk {

// Tokens run through the model per forward call while prefilling.
inline constexpr int kPrefillChunk = 256;

// Throws EngineError before anything changes when the turn does not fit the context
// (ContextFull) or the pool (OutOfMemory). Once decoding has begun, failures come back in the
// result's status and the partial answer stays in the history.
GenerationResult generate_answer(LoadedModel& model, ConversationMap& conversations, Conversation& conv,
                                 const std::string& user_text, const GenerateParams& params,
                                 const TokenCallback& on_token, const std::atomic<bool>* cancel);

}  // namespace llamadesk
