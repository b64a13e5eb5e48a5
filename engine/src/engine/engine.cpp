// The public boundary: every method catches what the engine throws and returns a Status.
#include "llamadesk/engine.h"

#include "backends/backend.h"
#include "core/exception_status.h"
#include "engine/engine_impl.h"
#include "model/weight_types.h"

namespace llamadesk {

namespace {

template <class Fn>
Status guarded(Fn&& fn) {
    try {
        fn();
        return Status::success();
    } catch (...) {
        return status_from_current_exception();
    }
}

}  // namespace

Engine::Engine() : impl_(std::make_unique<Impl>()) {}
Engine::~Engine() = default;

Status Engine::load(const LoadParams& params) {
    return guarded([&] { impl_->load(params); });
}

bool Engine::has_model() const { return impl_->model != nullptr; }

ModelInfo Engine::model_info() const { return impl_->model ? impl_->model->info : ModelInfo{}; }

// Returns 0 (never a valid id) if even the bookkeeping cannot be allocated.
ConversationId Engine::create_conversation(ChatFormat format, const std::string& date) {
    ConversationId id = 0;
    guarded([&] { id = impl_->create(format, date); });
    return id;
}

Status Engine::set_chat_format(ConversationId id, ChatFormat format) {
    return guarded([&] { impl_->set_format(id, format); });
}

Status Engine::reset_conversation(ConversationId id) {
    return guarded([&] { impl_->reset(id); });
}

Status Engine::delete_conversation(ConversationId id) {
    return guarded([&] { impl_->remove(id); });
}

Status Engine::set_evict_first(ConversationId id, bool evict_first) {
    return guarded([&] { impl_->set_evict_first(id, evict_first); });
}

Status Engine::set_snapshots(const SnapshotSettings& settings) {
    return guarded([&] { impl_->set_snapshots(settings); });
}

Status Engine::save_snapshot(ConversationId id) {
    return guarded([&] { impl_->save_snapshot(id); });
}

Status Engine::truncate_turns(ConversationId id, int n_turns) {
    return guarded([&] { impl_->truncate_turns(id, n_turns); });
}

Status Engine::drop_oldest_turns(ConversationId id, int n, const std::string& system_prompt) {
    return guarded([&] { impl_->drop_oldest_turns(id, n, system_prompt); });
}

Status Engine::restore_turns(ConversationId id, const std::vector<ChatTurn>& turns,
                             const std::string& system_prompt) {
    return guarded([&] { impl_->restore_turns(id, turns, system_prompt); });
}

namespace {

// Sampling values are checked before anything changes. A failure once decoding began is already
// in result.status; this catches the earlier ones.
template <class Fn>
GenerationResult guarded_generation(const GenerateParams& params, Fn&& fn) {
    GenerationResult result;
    result.status = validate_sampling(params.sampling);
    if (!result.status.ok()) return result;
    const Status before_decoding = guarded([&] { result = fn(); });
    if (!before_decoding.ok()) {
        result.status = before_decoding;
        result.stop_reason =
            before_decoding.code == ErrorCode::ContextFull ? StopReason::ContextFull : StopReason::Error;
    }
    return result;
}

}  // namespace

GenerationResult Engine::generate(ConversationId id, const std::string& user_text,
                                  const GenerateParams& params, const TokenCallback& on_token,
                                  const std::atomic<bool>* cancel) {
    return guarded_generation(params, [&] { return impl_->generate(id, user_text, params, on_token, cancel); });
}

std::vector<GenerationResult> Engine::generate_batch(const std::vector<BatchRequest>& requests,
                                                     const BatchAdmission& admit) {
    std::vector<GenerationResult> results;
    const Status status = guarded([&] { results = impl_->generate_batch(requests, admit); });
    if (status.ok()) return results;
    // Nothing was answered (no model, a conversation twice): every request says why.
    results.assign(requests.size(), GenerationResult{});
    for (size_t i = 0; i < requests.size(); ++i) {
        results[i].status = status;
        if (requests[i].on_finished) requests[i].on_finished(results[i]);
    }
    return results;
}

GenerationResult Engine::continue_answer(ConversationId id, const GenerateParams& params,
                                         const TokenCallback& on_token, const std::atomic<bool>* cancel) {
    return guarded_generation(params, [&] { return impl_->continue_answer(id, params, on_token, cancel); });
}

Status Engine::measure_turn(ConversationId id, const std::string& user_text, const std::string& system_prompt,
                            TurnSize* out) {
    return guarded([&] { *out = impl_->measure_turn(id, user_text, system_prompt); });
}

Status Engine::conversation_stats(ConversationId id, ConversationStats* out) const {
    return guarded([&] { *out = impl_->stats(id); });
}

PoolStats Engine::pool_stats() const {
    return impl_->model ? impl_->model->pool->stats() : PoolStats{};
}

Status Engine::cache_layout(ConversationId id, CacheLayout* out) const {
    return guarded([&] { *out = impl_->cache_layout(id); });
}

Status Engine::tokenize(const std::string& text, bool add_bos, std::vector<int>* out) const {
    return guarded([&] { *out = impl_->tokenize(text, add_bos); });
}

Status Engine::perplexity(const std::string& text, PerplexityResult* out, const PerplexityProgress& on_progress) {
    return guarded([&] { *out = impl_->perplexity(text, on_progress); });
}

const char* stop_reason_name(StopReason reason) {
    switch (reason) {
    case StopReason::Eos: return "eos";
    case StopReason::StopString: return "stop string";
    case StopReason::MaxTokens: return "max tokens";
    case StopReason::Cancelled: return "cancelled";
    case StopReason::ContextFull: return "context full";
    case StopReason::Error: return "error";
    }
    return "unknown";
}

}  // namespace llamadesk
