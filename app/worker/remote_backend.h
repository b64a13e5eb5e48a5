// A server speaking the OpenAI-compatible API behind InferenceBackend. The server keeps no
// conversation, so each one lives here as its turns and the whole history is sent with every
// message (chat: as messages, the server applying its own template; completion: as one text).
// Token counts, the context and the cache are the server's: only what it reports is passed on.
#pragma once

#include <map>
#include <memory>

#include "remote_session.h"
#include "worker/inference_backend.h"

class RemoteBackend final : public InferenceBackend {
public:
    // Reaches the server at location (remote_location()) with api_key (ApiKeyStore's for it) and
    // checks that it serves the model: nullptr with *error (the host, the status, the server's words).
    // timeout_ms: how long the server may stay silent before a request fails.
    static std::unique_ptr<RemoteBackend> connect(const QString& location, const QString& api_key,
                                                  int timeout_ms, QString* error);

    bool has_model() const override { return true; }
    llamadesk::ModelInfo model_info() const override { return info_; }
    // The date is the server's template's business.
    llamadesk::ConversationId create_conversation(llamadesk::ChatFormat format, const std::string& date) override;
    llamadesk::Status set_chat_format(llamadesk::ConversationId id, llamadesk::ChatFormat format) override;
    llamadesk::Status reset_conversation(llamadesk::ConversationId id) override;
    llamadesk::Status delete_conversation(llamadesk::ConversationId id) override;
    llamadesk::Status truncate_turns(llamadesk::ConversationId id, int n_turns) override;
    llamadesk::Status drop_oldest_turns(llamadesk::ConversationId id, int n, const std::string& system_prompt) override;
    llamadesk::Status restore_turns(llamadesk::ConversationId id, const std::vector<llamadesk::ChatTurn>& turns,
                                    const std::string& system_prompt) override;
    llamadesk::GenerationResult generate(llamadesk::ConversationId id, const std::string& user_text,
                                         const llamadesk::GenerateParams& params, const llamadesk::TokenCallback& on_token,
                                         const std::atomic<bool>* cancel) override;
    llamadesk::GenerationResult continue_answer(llamadesk::ConversationId id, const llamadesk::GenerateParams& params,
                                                const llamadesk::TokenCallback& on_token,
                                                const std::atomic<bool>* cancel) override;
    // The server answers one conversation at a time: each request in turn, and after each answer
    // those admit brings, in the order they came.
    std::vector<llamadesk::GenerationResult> generate_batch(const std::vector<llamadesk::BatchRequest>& requests,
                                                            const llamadesk::BatchAdmission& admit) override;
    llamadesk::Status measure_turn(llamadesk::ConversationId id, const std::string& user_text,
                                   const std::string& system_prompt, llamadesk::TurnSize* out) override;
    llamadesk::Status conversation_stats(llamadesk::ConversationId id, llamadesk::ConversationStats* out) const override;
    llamadesk::PoolStats pool_stats() const override { return {}; }
    llamadesk::Status cache_layout(llamadesk::ConversationId id, llamadesk::CacheLayout* out) const override;
    std::optional<ServerFigures> server_figures() const override { return figures_; }

private:
    struct History {
        llamadesk::ChatFormat format = llamadesk::ChatFormat::Llama2Chat;
        std::vector<llamadesk::ChatTurn> turns;
        std::string system_prompt;
    };
    RemoteBackend(const llamadesk::remote::Endpoint& endpoint, int timeout_ms);
    History* find(llamadesk::ConversationId id);
    const History* find(llamadesk::ConversationId id) const;
    // Streams the answer to `turn` (appended to c's history when anything came back).
    llamadesk::GenerationResult answer(History& c, llamadesk::ConversationId id, llamadesk::ChatTurn turn,
                                       bool continuing, const llamadesk::GenerateParams& params,
                                       const llamadesk::TokenCallback& on_token, const std::atomic<bool>* cancel);
    llamadesk::GenerationStats stats_of(llamadesk::ConversationId id, const llamadesk::remote::StreamFigures& f) const;
    void take(const llamadesk::remote::StreamFigures& f);

    llamadesk::remote::RemoteSession session_;
    llamadesk::ModelInfo info_;
    std::map<llamadesk::ConversationId, History> conversations_;
    llamadesk::ConversationId next_id_ = 1;
    std::optional<ServerFigures> figures_;
};
