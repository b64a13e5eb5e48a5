// What the worker drives: the engine on this machine (LocalBackend) or a server speaking the
// OpenAI-compatible API (RemoteBackend). The calls and their meaning are the Engine's own
// (engine.h), so the worker, and the window above it, do not know which one answers.
#pragma once

#include <atomic>
#include <optional>
#include <vector>

#include <llamadesk/engine.h>

#include "worker/server_figures.h"

class InferenceBackend {
public:
    virtual ~InferenceBackend() = default;

    virtual bool has_model() const = 0;
    virtual llamadesk::ModelInfo model_info() const = 0;

    // date: the conversation's day for formats that write one (Engine::create_conversation).
    virtual llamadesk::ConversationId create_conversation(llamadesk::ChatFormat format, const std::string& date) = 0;
    virtual llamadesk::Status set_chat_format(llamadesk::ConversationId id, llamadesk::ChatFormat format) = 0;
    virtual llamadesk::Status reset_conversation(llamadesk::ConversationId id) = 0;
    virtual llamadesk::Status delete_conversation(llamadesk::ConversationId id) = 0;
    // Engine::set_evict_first; a server keeps its own cache, so there is nothing to do there.
    virtual llamadesk::Status set_evict_first(llamadesk::ConversationId, bool) { return llamadesk::Status::success(); }
    virtual llamadesk::Status truncate_turns(llamadesk::ConversationId id, int n_turns) = 0;
    virtual llamadesk::Status drop_oldest_turns(llamadesk::ConversationId id, int n,
                                                const std::string& system_prompt) = 0;
    virtual llamadesk::Status restore_turns(llamadesk::ConversationId id, const std::vector<llamadesk::ChatTurn>& turns,
                                            const std::string& system_prompt) = 0;

    virtual llamadesk::GenerationResult generate(llamadesk::ConversationId id, const std::string& user_text,
                                                 const llamadesk::GenerateParams& params,
                                                 const llamadesk::TokenCallback& on_token,
                                                 const std::atomic<bool>* cancel) = 0;
    virtual llamadesk::GenerationResult continue_answer(llamadesk::ConversationId id,
                                                        const llamadesk::GenerateParams& params,
                                                        const llamadesk::TokenCallback& on_token,
                                                        const std::atomic<bool>* cancel) = 0;
    // Several answers, admit asked for more as Engine::generate_batch does: this machine's engine
    // answers them together, a server one conversation at a time.
    virtual std::vector<llamadesk::GenerationResult> generate_batch(const std::vector<llamadesk::BatchRequest>& requests,
                                                                    const llamadesk::BatchAdmission& admit) = 0;
    // Fails (and the window shows no count) where the tokenizer is out of reach, as on a server.
    virtual llamadesk::Status measure_turn(llamadesk::ConversationId id, const std::string& user_text,
                                           const std::string& system_prompt, llamadesk::TurnSize* out) = 0;

    virtual llamadesk::Status conversation_stats(llamadesk::ConversationId id,
                                                 llamadesk::ConversationStats* out) const = 0;
    virtual llamadesk::PoolStats pool_stats() const = 0;
    virtual llamadesk::Status cache_layout(llamadesk::ConversationId id, llamadesk::CacheLayout* out) const = 0;
    // Writes the conversation's new full KV blocks to disk (Engine::save_snapshot); a server keeps
    // its own cache, so there is nothing to do there.
    virtual llamadesk::Status save_snapshot(llamadesk::ConversationId) { return llamadesk::Status::success(); }
    // A server's own figures for the answer in progress or the last one; nullopt on this machine.
    virtual std::optional<ServerFigures> server_figures() const { return std::nullopt; }
};
