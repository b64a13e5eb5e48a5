// The engine on this machine behind InferenceBackend: every call forwards to llamadesk::Engine.
#pragma once

#include "worker/inference_backend.h"

class LocalBackend final : public InferenceBackend {
public:
    // On failure the previous model stays loaded, as Engine::load promises.
    llamadesk::Status load(const llamadesk::LoadParams& params) { return engine_.load(params); }
    llamadesk::Status set_snapshots(const llamadesk::SnapshotSettings& settings) {
        return engine_.set_snapshots(settings);
    }

    bool has_model() const override { return engine_.has_model(); }
    llamadesk::ModelInfo model_info() const override { return engine_.model_info(); }
    llamadesk::ConversationId create_conversation(llamadesk::ChatFormat format, const std::string& date) override {
        return engine_.create_conversation(format, date);
    }
    llamadesk::Status set_chat_format(llamadesk::ConversationId id, llamadesk::ChatFormat format) override {
        return engine_.set_chat_format(id, format);
    }
    llamadesk::Status reset_conversation(llamadesk::ConversationId id) override { return engine_.reset_conversation(id); }
    llamadesk::Status delete_conversation(llamadesk::ConversationId id) override { return engine_.delete_conversation(id); }
    llamadesk::Status set_evict_first(llamadesk::ConversationId id, bool evict_first) override {
        return engine_.set_evict_first(id, evict_first);
    }
    llamadesk::Status truncate_turns(llamadesk::ConversationId id, int n_turns) override {
        return engine_.truncate_turns(id, n_turns);
    }
    llamadesk::Status drop_oldest_turns(llamadesk::ConversationId id, int n, const std::string& system_prompt) override {
        return engine_.drop_oldest_turns(id, n, system_prompt);
    }
    llamadesk::Status restore_turns(llamadesk::ConversationId id, const std::vector<llamadesk::ChatTurn>& turns,
                                    const std::string& system_prompt) override {
        return engine_.restore_turns(id, turns, system_prompt);
    }
    llamadesk::GenerationResult generate(llamadesk::ConversationId id, const std::string& user_text,
                                         const llamadesk::GenerateParams& params, const llamadesk::TokenCallback& on_token,
                                         const std::atomic<bool>* cancel) override {
        return engine_.generate(id, user_text, params, on_token, cancel);
    }
    llamadesk::GenerationResult continue_answer(llamadesk::ConversationId id, const llamadesk::GenerateParams& params,
                                                const llamadesk::TokenCallback& on_token,
                                                const std::atomic<bool>* cancel) override {
        return engine_.continue_answer(id, params, on_token, cancel);
    }
    std::vector<llamadesk::GenerationResult> generate_batch(const std::vector<llamadesk::BatchRequest>& requests,
                                                            const llamadesk::BatchAdmission& admit) override {
        return engine_.generate_batch(requests, admit);
    }
    llamadesk::Status measure_turn(llamadesk::ConversationId id, const std::string& user_text,
                                   const std::string& system_prompt, llamadesk::TurnSize* out) override {
        return engine_.measure_turn(id, user_text, system_prompt, out);
    }
    llamadesk::Status conversation_stats(llamadesk::ConversationId id, llamadesk::ConversationStats* out) const override {
        return engine_.conversation_stats(id, out);
    }
    llamadesk::Status save_snapshot(llamadesk::ConversationId id) override { return engine_.save_snapshot(id); }
    llamadesk::PoolStats pool_stats() const override { return engine_.pool_stats(); }
    llamadesk::Status cache_layout(llamadesk::ConversationId id, llamadesk::CacheLayout* out) const override {
        return engine_.cache_layout(id, out);
    }

private:
    llamadesk::Engine engine_;
};
