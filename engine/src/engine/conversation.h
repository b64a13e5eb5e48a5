// One conversation's state: its turns as text, the token history the model sees, and which part
// of that history its KV cache holds (through its block table into the shared pool).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "llamadesk/engine.h"

namespace llamadesk {

class Tokenizer;

struct Turn {
    std::string user;
    std::string answer;
    int begin = 0;  // history index of the turn's first token (its BOS for Llama2Chat)
    int end = 0;    // one past the answer's last token (its EOS for Llama2Chat)
};

struct Conversation {
    ConversationId id = 0;
    ChatFormat format = ChatFormat::Llama2Chat;
    std::string system_prompt;        // Llama2Chat: merged into the first turn
    std::vector<Turn> turns;
    std::vector<int32_t> history;     // every token of the conversation so far, in order
    bool history_stale = false;       // turns not yet tokenized with the current tokenizer
    std::vector<int32_t> block_table; // pool block ids, in position order
    int n_cached = 0;                 // history[0, n_cached) have keys and values in the cache
    int evicted_tokens = 0;           // cached tokens lost to eviction and not yet prefilled again
    int64_t times_evicted = 0;
    uint64_t last_used = 0;           // engine tick of the last generate(), for LRU eviction
};

// Tokenizes the turns' text again (after a restore or a model change). Computes nothing; the
// caller has already dropped the cache.
void rebuild_history(Conversation& conv, const Tokenizer& tok);

// Keeps the first n_turns turns and the history up to where turn n_turns began; the cached count
// follows (the caller frees the blocks that no longer hold anything).
void truncate_history(Conversation& conv, int n_turns);

// What user_text adds as conv's next turn; the system prompt applies only to a first turn.
TurnSize measure_user_turn(const Tokenizer& tok, const Conversation& conv, const std::string& user_text,
                           const std::string& system_prompt, int context_length);

ConversationStats conversation_stats_of(const Conversation& conv, int context_length);

}  // namespace llamadesk
