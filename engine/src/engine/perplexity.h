// The perplexity score of a text under the loaded model, with the backend's real forward pass.
#pragma once

#include <string>

#include "engine/loaded_model.h"
#include "llamadesk/engine.h"

namespace llamadesk {

// Tokenizes text with BOS first and scores every token after it, as Engine::perplexity()
// documents. The KV blocks it needs are lent by the pool (idle conversations may be evicted
// for them) and given back before it returns. Throws EngineError: InvalidArgument when the text
// has fewer than 2 tokens, OutOfMemory when the pool cannot hold one window.
PerplexityResult score_perplexity(LoadedModel& model, const std::string& text, const EvictionHandler& on_evicted,
                                  const PerplexityProgress& on_progress);

}  // namespace llamadesk
