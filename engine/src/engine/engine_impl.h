// Engine::Impl: the loaded model and the conversations. Methods throw EngineError; engine.cpp
// catches at the public boundary.
#pragma once

#include <memory>

#include <map>

#include "engine/sequence.h"
#include "engine/loaded_model.h"
#include "llamadesk/engine.h"

namespace llamadesk {

struct Engine::Impl {
    std::unique_ptr<LoadedModel> model;
    std::map<ConversationId, Sequence> conversations;
    SnapshotSettings snapshot_settings;
    ConversationId next_id = 1;  // 0 is never a conversation: perplexity borrows blocks under it

    void load(const LoadParams& params);
    LoadedModel& require_model() const;
    Sequence& find(ConversationId id);
    const Sequence& find(ConversationId id) const;

    ConversationId create(ChatFormat format, const std::string& date);
    void set_format(ConversationId id, ChatFormat format);
    void reset(ConversationId id);
    void remove(ConversationId id);
    void set_evict_first(ConversationId id, bool evict_first);
    void truncate_turns(ConversationId id, int n_turns);
    void drop_oldest_turns(ConversationId id, int n, const std::string& system_prompt);
    void restore_turns(ConversationId id, const std::vector<ChatTurn>& turns, const std::string& system_prompt);
    GenerationResult generate(ConversationId id, const std::string& user_text, const GenerateParams& params,
                              const TokenCallback& on_token, const std::atomic<bool>* cancel);
    std::vector<GenerationResult> generate_batch(const std::vector<BatchRequest>& requests,
                                                 const BatchAdmission& admit);
    GenerationResult continue_answer(ConversationId id, const GenerateParams& params,
                                     const TokenCallback& on_token, const std::atomic<bool>* cancel);
    TurnSize measure_turn(ConversationId id, const std::string& user_text, const std::string& system_prompt);

    void set_snapshots(const SnapshotSettings& settings);
    void save_snapshot(ConversationId id);

    ConversationStats stats(ConversationId id) const;
    CacheLayout cache_layout(ConversationId id) const;
    std::vector<int> tokenize(const std::string& text, bool add_bos) const;
    PerplexityResult perplexity(const std::string& text, const PerplexityProgress& on_progress);

private:
    void drop_cache(Sequence& conv);  // frees its blocks; history kept
    void note_evictions(const std::vector<Eviction>& evicted);
    // After the turns, system prompt or format changed: no cache, history tokenized again.
    void rebuild(Sequence& conv);
    void retokenize_if_stale(Sequence& conv);
};

}  // namespace llamadesk
