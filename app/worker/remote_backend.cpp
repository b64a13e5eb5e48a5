#include "worker/remote_backend.h"

#include <deque>

using namespace llamadesk;
using namespace llamadesk::remote;

namespace {

Status unknown(ConversationId id) {
    return Status::error(ErrorCode::UnknownConversation, "no conversation " + std::to_string(id));
}

GenerationResult refused(Status status) {
    GenerationResult result;
    result.status = std::move(status);
    return result;
}

}  // namespace

std::unique_ptr<RemoteBackend> RemoteBackend::connect(const QString& location, const QString& api_key,
                                                      int timeout_ms, QString* error) {
    Endpoint endpoint = endpoint_from_location(location);
    *error = check_base_url(endpoint.base_url);
    if (!error->isEmpty()) return nullptr;
    endpoint.api_key = api_key;
    std::unique_ptr<RemoteBackend> backend(new RemoteBackend(endpoint, timeout_ms));
    const std::optional<QStringList> models = backend->session_.models(error);
    if (!models) return nullptr;
    if (!models->contains(endpoint.model)) {
        *error = QStringLiteral("%1 does not serve the model '%2'; it serves: %3")
                     .arg(host_and_port(endpoint.base_url), endpoint.model, models->join(", "));
        return nullptr;
    }
    return backend;
}

RemoteBackend::RemoteBackend(const Endpoint& endpoint, int timeout_ms) : session_(endpoint, timeout_ms) {
    info_.name = endpoint.model.toStdString();
    info_.path = remote_location(endpoint).toStdString();
    info_.format = "OpenAI-compatible API";
    info_.backend = "Remote";
    info_.device = host_and_port(endpoint.base_url).toStdString();
    info_.tokenizer = "the server's";
    info_.chat_format = ChatFormat::Llama2Chat;  // chat messages; the server applies its model's template
    info_.chat_format_reason = "the server applies its model's template";
}

RemoteBackend::History* RemoteBackend::find(ConversationId id) {
    const auto it = conversations_.find(id);
    return it == conversations_.end() ? nullptr : &it->second;
}

const RemoteBackend::History* RemoteBackend::find(ConversationId id) const {
    const auto it = conversations_.find(id);
    return it == conversations_.end() ? nullptr : &it->second;
}

ConversationId RemoteBackend::create_conversation(ChatFormat format, const std::string& /*date*/) {
    conversations_[next_id_].format = format;
    return next_id_++;
}

Status RemoteBackend::set_chat_format(ConversationId id, ChatFormat format) {
    History* c = find(id);
    if (!c) return unknown(id);
    c->format = format;
    return Status::success();
}

Status RemoteBackend::reset_conversation(ConversationId id) {
    History* c = find(id);
    if (!c) return unknown(id);
    c->turns.clear();
    c->system_prompt.clear();
    return Status::success();
}

Status RemoteBackend::delete_conversation(ConversationId id) {
    return conversations_.erase(id) ? Status::success() : unknown(id);
}

Status RemoteBackend::truncate_turns(ConversationId id, int n_turns) {
    History* c = find(id);
    if (!c) return unknown(id);
    if (n_turns < 0 || size_t(n_turns) > c->turns.size())
        return Status::error(ErrorCode::InvalidArgument, "cannot keep " + std::to_string(n_turns) + " of " +
                                                             std::to_string(c->turns.size()) + " turns");
    c->turns.resize(size_t(n_turns));
    return Status::success();
}

Status RemoteBackend::drop_oldest_turns(ConversationId id, int n, const std::string& system_prompt) {
    History* c = find(id);
    if (!c) return unknown(id);
    if (n < 0 || size_t(n) > c->turns.size())
        return Status::error(ErrorCode::InvalidArgument, "cannot drop " + std::to_string(n) + " of " +
                                                             std::to_string(c->turns.size()) + " turns");
    c->turns.erase(c->turns.begin(), c->turns.begin() + n);
    c->system_prompt = system_prompt;
    return Status::success();
}

Status RemoteBackend::restore_turns(ConversationId id, const std::vector<ChatTurn>& turns,
                                    const std::string& system_prompt) {
    History* c = find(id);
    if (!c) return unknown(id);
    c->turns = turns;
    c->system_prompt = system_prompt;
    return Status::success();
}

GenerationResult RemoteBackend::generate(ConversationId id, const std::string& user_text, const GenerateParams& params,
                                         const TokenCallback& on_token, const std::atomic<bool>* cancel) {
    History* c = find(id);
    if (!c) return refused(unknown(id));
    return answer(*c, id, {user_text, {}}, false, params, on_token, cancel);
}

GenerationResult RemoteBackend::continue_answer(ConversationId id, const GenerateParams& params,
                                                const TokenCallback& on_token, const std::atomic<bool>* cancel) {
    History* c = find(id);
    if (!c) return refused(unknown(id));
    if (c->turns.empty()) return refused(Status::error(ErrorCode::InvalidArgument, "there is no answer to continue"));
    // The chat API starts a new assistant message; going on inside one is not part of it.
    if (c->format != ChatFormat::Completion)
        return refused(Status::error(ErrorCode::Unsupported,
                                     "a server cannot continue a chat answer where it stopped; Regenerate asks "
                                     "again (plain completion conversations can be continued)"));
    return answer(*c, id, c->turns.back(), true, params, on_token, cancel);
}

std::vector<GenerationResult> RemoteBackend::generate_batch(const std::vector<BatchRequest>& requests,
                                                           const BatchAdmission& admit) {
    std::deque<BatchRequest> queue(requests.begin(), requests.end());
    std::vector<GenerationResult> results;
    while (!queue.empty()) {
        const BatchRequest r = std::move(queue.front());
        queue.pop_front();
        GenerationResult result = r.resume ? continue_answer(r.conversation, r.params, r.on_token, r.cancel)
                                           : generate(r.conversation, r.user_text, r.params, r.on_token, r.cancel);
        if (r.on_finished) r.on_finished(result);
        results.push_back(std::move(result));
        if (admit)
            for (BatchRequest& more : admit()) queue.push_back(std::move(more));
    }
    return results;
}

GenerationResult RemoteBackend::answer(History& c, ConversationId id, ChatTurn turn, bool continuing,
                                       const GenerateParams& params, const TokenCallback& on_token,
                                       const std::atomic<bool>* cancel) {
    GenerationResult result;
    result.status = validate_sampling(params.sampling);
    if (!result.status.ok()) return result;
    const size_t n_before = continuing ? c.turns.size() - 1 : c.turns.size();
    const std::string system = n_before == 0 && !continuing ? params.system_prompt : c.system_prompt;
    figures_ = ServerFigures{};
    figures_->server = QString::fromStdString(info_.device);
    const PieceCallback on_piece = [&](const QString& piece, const StreamFigures& f) {
        take(f);
        if (on_token) on_token(piece.toStdString(), stats_of(id, f));
    };
    StreamResult r;
    if (c.format == ChatFormat::Completion) {
        QString prompt;
        for (size_t i = 0; i < n_before; ++i)
            prompt += QString::fromStdString(c.turns[i].user + c.turns[i].answer);
        prompt += QString::fromStdString(turn.user + turn.answer);
        r = session_.complete(prompt, params, on_piece, cancel);
    } else {
        std::vector<Message> messages;
        if (!system.empty()) messages.push_back({"system", QString::fromStdString(system)});
        for (size_t i = 0; i < n_before; ++i) {
            messages.push_back({"user", QString::fromStdString(c.turns[i].user)});
            messages.push_back({"assistant", QString::fromStdString(c.turns[i].answer)});
        }
        messages.push_back({"user", QString::fromStdString(turn.user)});
        r = session_.chat(messages, params, on_piece, cancel);
    }
    take(r.figures);
    figures_->kv_cache_usage = session_.kv_cache_usage();  // the server's occupancy after this answer

    result.text = r.text.toStdString();
    // A failure before any text leaves the conversation as it was (the window gives the question back).
    if (!r.text.isEmpty() || r.error.isEmpty()) {
        if (continuing) {
            c.turns.back().answer += result.text;
        } else {
            turn.answer = result.text;
            c.turns.push_back(turn);
            c.system_prompt = system;
        }
    }
    if (!r.error.isEmpty()) result.status = Status::error(ErrorCode::BackendUnavailable, r.error.toStdString());
    result.stop_reason = r.cancelled              ? StopReason::Cancelled
                         : !r.error.isEmpty()     ? StopReason::Error
                         : r.finish_reason == "length" ? StopReason::MaxTokens
                                                  : StopReason::Eos;
    result.stats = stats_of(id, r.figures);
    return result;
}

void RemoteBackend::take(const StreamFigures& f) {
    figures_->time_to_first_piece_ms = f.time_to_first_piece_ms;
    figures_->pieces = f.pieces;
    if (f.pieces >= 2 && f.streaming_ms > 0) figures_->pieces_per_second = (f.pieces - 1) / (f.streaming_ms / 1000.0);
    figures_->tokens_per_second = f.tokens_per_second();
    if (f.usage) {
        figures_->prompt_tokens = f.usage->prompt_tokens;
        figures_->completion_tokens = f.usage->completion_tokens;
        figures_->cached_tokens = f.usage->cached_tokens;
    }
}

GenerationStats RemoteBackend::stats_of(ConversationId id, const StreamFigures& f) const {
    // Only what was measured here or counted by the server; the rest stays zero and is not shown.
    GenerationStats stats;
    stats.time_to_first_token_ms = std::max(0.0, f.time_to_first_piece_ms);
    if (f.usage) {
        stats.prompt_tokens = f.usage->prompt_tokens;
        stats.generated_tokens = f.usage->completion_tokens;
        stats.decode_tokens_per_s = f.tokens_per_second().value_or(0.0);
    }
    conversation_stats(id, &stats.conversation);
    return stats;
}

Status RemoteBackend::measure_turn(ConversationId, const std::string&, const std::string&, TurnSize*) {
    return Status::error(ErrorCode::Unsupported, "the server counts the tokens; it does not say before sending");
}

Status RemoteBackend::conversation_stats(ConversationId id, ConversationStats* out) const {
    const History* c = find(id);
    if (!c) return unknown(id);
    *out = ConversationStats{};
    out->id = id;
    out->n_turns = int(c->turns.size());
    return Status::success();
}

Status RemoteBackend::cache_layout(ConversationId id, CacheLayout* out) const {
    if (!find(id)) return unknown(id);
    *out = CacheLayout{};
    out->device = info_.device;  // the cache lives on this server; its blocks are not visible from here
    return Status::success();
}
