#include "engine/sequence.h"

#include <algorithm>

#include "chat/chat_template.h"

namespace llamadesk {

void rebuild_history(Sequence& conv, const Tokenizer& tok) {
    conv.history.clear();
    for (size_t i = 0; i < conv.turns.size(); ++i) {
        Turn& turn = conv.turns[i];
        turn.begin = int(conv.history.size());
        const std::vector<int> user =
            render_user_turn(tok, conv.format, i == 0, conv.system_prompt, turn.user, conv.date);
        const std::vector<int> answer = render_answer(tok, conv.format, turn.answer);
        conv.history.insert(conv.history.end(), user.begin(), user.end());
        conv.history.insert(conv.history.end(), answer.begin(), answer.end());
        turn.end = int(conv.history.size());
    }
    conv.history_stale = false;
}

int truncate_history(Sequence& conv, int n_turns) {
    if (n_turns < int(conv.turns.size())) {
        const int cut = conv.turns[size_t(n_turns)].begin;
        conv.turns.resize(size_t(n_turns));
        conv.history.resize(size_t(cut));
        conv.evicted_tokens = std::min(conv.evicted_tokens, cut);
    }
    return int(conv.history.size());
}

void note_eviction(Sequence& conv, const Eviction& eviction) {
    conv.evicted_tokens = std::max(conv.evicted_tokens, eviction.n_cached);
    ++conv.times_evicted;
}

TurnSize measure_user_turn(const Tokenizer& tok, const Sequence& conv, const std::string& user_text,
                           const std::string& system_prompt, int context_length) {
    TurnSize s;
    s.alone_tokens = int(render_user_turn(tok, conv.format, true, system_prompt, user_text, conv.date).size());
    s.message_tokens = conv.turns.empty()
                           ? s.alone_tokens
                           : int(render_user_turn(tok, conv.format, false, conv.system_prompt, user_text, conv.date).size());
    s.history_tokens = int(conv.history.size());
    s.context_length = context_length;
    return s;
}

ConversationStats conversation_stats_of(const Sequence& conv, const KvPool* pool, int context_length) {
    ConversationStats s;
    s.id = conv.id;
    s.history_tokens = int(conv.history.size());
    s.cached_tokens = pool ? pool->n_cached(conv.id) : 0;
    s.cache_blocks = pool ? int(pool->block_table(conv.id).size()) : 0;
    s.context_length = context_length;
    s.n_turns = int(conv.turns.size());
    s.times_evicted = conv.times_evicted;
    s.format = conv.format;
    s.format_note = conv.format_note;
    return s;
}

}  // namespace llamadesk
