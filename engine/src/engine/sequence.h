// What the engine holds of one conversation, a Sequence: its turns as text and the token history
// the model sees. Which part of that history the KV cache holds, and in which blocks, is the pool's
// (cache/kv_pool.h). The window's saved conversations and its list entries are other types.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cache/kv_pool.h"
#include "llamadesk/engine.h"

namespace llamadesk {

class Tokenizer;

struct Turn {
    std::string user;
    std::string answer;
    int begin = 0;  // history index of the turn's first token (its BOS for Llama2Chat)
    int end = 0;    // one past the answer's last token (its EOS for Llama2Chat)
};

struct Sequence {
    ConversationId id = 0;
    ChatFormat format = ChatFormat::Llama2Chat;
    std::string system_prompt;        // Llama2Chat: merged into the first turn
    std::string date;                 // Llama31Chat's "Today Date", fixed when it was created
    std::vector<Turn> turns;
    std::vector<int32_t> history;     // every token of the conversation so far, in order
    bool history_stale = false;       // turns not yet tokenized with the current tokenizer
    int evicted_tokens = 0;           // cached tokens lost to eviction and not yet prefilled again
    int64_t times_evicted = 0;
    // Why format is not the one the conversation was given: set when a model whose vocabulary
    // cannot write that one was loaded, and the conversation took the model's own.
    std::string format_note;
    bool evict_first = false;  // the pool evicts it before the others (Engine::set_evict_first)
};

// Tokenizes the turns' text again (after a restore or a model change). Computes nothing; the
// caller has already dropped the cache.
void rebuild_history(Sequence& conv, const Tokenizer& tok);

// Keeps the first n_turns turns and the history up to where turn n_turns began; returns the history's
// new length (the caller truncates the cache to it).
int truncate_history(Sequence& conv, int n_turns);

// conv was evicted from the pool: it is prefilled again when next used.
void note_eviction(Sequence& conv, const Eviction& eviction);

// What user_text adds as conv's next turn; the system prompt applies only to a first turn.
TurnSize measure_user_turn(const Tokenizer& tok, const Sequence& conv, const std::string& user_text,
                           const std::string& system_prompt, int context_length);

// pool is null when no model is loaded.
ConversationStats conversation_stats_of(const Sequence& conv, const KvPool* pool, int context_length);

}  // namespace llamadesk
