#include "engine/engine_impl.h"

#include "engine/context_shift.h"

#include <algorithm>

#include "chat/chat_template.h"
#include "core/error.h"
#include "engine/generation.h"
#include "engine/kv_snapshots.h"
#include "engine/perplexity.h"

namespace llamadesk {

void Engine::Impl::load(const LoadParams& params) {
    std::unique_ptr<LoadedModel> fresh = load_model(params);  // throws: nothing changed
    fresh->snapshots = open_snapshot_store(*fresh, snapshot_settings);

    // The old pool goes with the old model, so every cache is empty now; histories are
    // tokenized again because the vocabulary may differ.
    model = std::move(fresh);
    for (auto& [id, conv] : conversations) {
        drop_cache(conv);
        conv.history_stale = true;
        conv.format_note.clear();  // it named the model before
        if (conv.evict_first) model->pool->set_evict_first(id, true);
        // The load stands whatever a conversation holds: one that cannot be tokenized now stays
        // stale and says why when next used.
        try {
            retokenize_if_stale(conv);
        } catch (const EngineError&) {
        }
    }
}

LoadedModel& Engine::Impl::require_model() const {
    if (!model) fail(ErrorCode::NoModel, "no model is loaded; open a checkpoint first");
    return *model;
}

Sequence& Engine::Impl::find(ConversationId id) {
    auto it = conversations.find(id);
    if (it == conversations.end())
        fail(ErrorCode::UnknownConversation, "there is no conversation " + std::to_string(id));
    return it->second;
}

const Sequence& Engine::Impl::find(ConversationId id) const {
    return const_cast<Impl*>(this)->find(id);
}

ConversationId Engine::Impl::create(ChatFormat format, const std::string& date) {
    const ConversationId id = next_id++;
    Sequence& conv = conversations[id];
    conv.id = id;
    conv.format = format;
    conv.date = date.empty() ? today_date() : date;
    conv.history_stale = true;  // not yet checked against the model: a format it cannot write gives way
    return id;
}

void Engine::Impl::set_format(ConversationId id, ChatFormat format) {
    Sequence& conv = find(id);
    if (conv.format == format) return;
    conv.format = format;  // one this model cannot write gives way to its own (retokenize_if_stale)
    conv.format_note.clear();
    rebuild(conv);
}

void Engine::Impl::drop_cache(Sequence& conv) {
    if (model) model->pool->release(conv.id);
    conv.evicted_tokens = 0;
}

void Engine::Impl::note_evictions(const std::vector<Eviction>& evicted) {
    for (const Eviction& e : evicted)
        if (auto it = conversations.find(e.id); it != conversations.end()) note_eviction(it->second, e);
}

void Engine::Impl::rebuild(Sequence& conv) {
    drop_cache(conv);
    conv.history.clear();
    conv.history_stale = true;
    retokenize_if_stale(conv);
}

void Engine::Impl::retokenize_if_stale(Sequence& conv) {
    if (!model || !conv.history_stale) return;
    auto tokenize = [&] {
        // The tokens the saved cache was computed from, when its text was saved; else the text's own.
        if (!model->snapshots || !restore_history(*model, conv)) rebuild_history(conv, *model->tokenizer);
        // A conversation without turns has written nothing yet: its first turn tells whether it can.
        if (conv.turns.empty())
            (void)render_user_turn(*model->tokenizer, conv.format, true, std::string(), std::string(), conv.date);
    };
    try {
        tokenize();
    } catch (const EngineError& e) {
        // A format this vocabulary cannot write (a Llama 3 conversation, a SentencePiece model):
        // the conversation keeps its text and takes the model's own format, and says so.
        const ChatFormat own = model->info.chat_format;
        if (e.code() != ErrorCode::InvalidArgument || conv.format == own) throw;
        conv.format_note = "This conversation continues in " + chat_format_name(own) + ": " + model->info.name +
                           " cannot write " + chat_format_name(conv.format) + ".";
        conv.format = own;
        tokenize();
    }
}

void Engine::Impl::reset(ConversationId id) {
    Sequence& conv = find(id);
    drop_cache(conv);
    conv.turns.clear();
    conv.history.clear();
    conv.history_stale = false;
    conv.system_prompt.clear();
}

void Engine::Impl::remove(ConversationId id) {
    drop_cache(find(id));
    if (model) model->pool->set_evict_first(id, false);
    conversations.erase(id);
}

void Engine::Impl::set_evict_first(ConversationId id, bool evict_first) {
    find(id).evict_first = evict_first;
    if (model) model->pool->set_evict_first(id, evict_first);
}

void Engine::Impl::truncate_turns(ConversationId id, int n_turns) {
    Sequence& conv = find(id);
    if (n_turns < 0) fail(ErrorCode::InvalidArgument, "cannot keep a negative number of turns");
    if (conv.history_stale) {  // no tokens yet: only the text changes
        if (n_turns < int(conv.turns.size())) conv.turns.resize(size_t(n_turns));
        return;
    }
    // The cache keeps everything before the cut; nothing is recomputed.
    const int kept = truncate_history(conv, n_turns);
    if (model) model->pool->truncate(conv.id, kept);
    if (conv.turns.empty()) conv.system_prompt.clear();
}

void Engine::Impl::drop_oldest_turns(ConversationId id, int n, const std::string& system_prompt) {
    Sequence& conv = find(id);
    if (n < 0) fail(ErrorCode::InvalidArgument, "cannot drop a negative number of turns");
    // The later turns keep their cache, moved to their new positions, when their tokens stay the same.
    if (model && !conv.history_stale) {
        if (const TurnShift shift = turn_shift(*model->tokenizer, conv, n, system_prompt); shift.keep >= 0) {
            shift_context(*model, conv, shift.keep, shift.n);
            conv.system_prompt = system_prompt;
            return;
        }
    }
    // Otherwise every later turn's tokens change, so the cache cannot be kept.
    conv.turns.erase(conv.turns.begin(), conv.turns.begin() + std::min<size_t>(size_t(n), conv.turns.size()));
    conv.system_prompt = system_prompt;
    rebuild(conv);
}

void Engine::Impl::restore_turns(ConversationId id, const std::vector<ChatTurn>& turns,
                                 const std::string& system_prompt) {
    Sequence& conv = find(id);
    const std::vector<int32_t> before = conv.history_stale ? std::vector<int32_t>() : conv.history;
    conv.turns.clear();
    for (const ChatTurn& t : turns) conv.turns.push_back(Turn{t.user, t.answer, 0, 0});
    conv.system_prompt = system_prompt;
    if (!model) return rebuild(conv);
    // The cache stays for the full blocks the new history begins with, as computed from the start
    // (a version switched to, an earlier exchange deleted): only what differs is computed again.
    conv.history.clear();
    conv.history_stale = true;
    conv.evicted_tokens = 0;
    try {
        retokenize_if_stale(conv);
    } catch (...) {
        drop_cache(conv);  // no history the cache could belong to
        throw;
    }
    const auto differ = std::mismatch(before.begin(), before.end(), conv.history.begin(), conv.history.end());
    const int same = int(differ.first - before.begin());
    model->pool->truncate(id, std::min(same, model->pool->faithful_blocks(id) * model->pool->layout().block_size));
}

GenerationResult Engine::Impl::generate(ConversationId id, const std::string& user_text,
                                        const GenerateParams& params, const TokenCallback& on_token,
                                        const std::atomic<bool>* cancel) {
    LoadedModel& m = require_model();
    Sequence& conv = find(id);
    retokenize_if_stale(conv);
    return generate_answer(m, conv, [this](const auto& evicted) { note_evictions(evicted); }, user_text, params,
                           on_token, cancel);
}

std::vector<GenerationResult> Engine::Impl::generate_batch(const std::vector<BatchRequest>& requests,
                                                           const BatchAdmission& admit) {
    LoadedModel& m = require_model();
    for (size_t i = 0; i < requests.size(); ++i)
        for (size_t j = 0; j < i; ++j)
            if (requests[i].conversation == requests[j].conversation)
                fail(ErrorCode::InvalidArgument, "conversation " + std::to_string(requests[i].conversation) +
                                                     " appears twice in one batch; it can give one answer at a time");
    const auto resolve = [this](ConversationId id) -> Sequence& {
        Sequence& conv = find(id);
        retokenize_if_stale(conv);
        return conv;
    };
    return generate_answers(m, resolve, [this](const auto& evicted) { note_evictions(evicted); }, requests, admit);
}

GenerationResult Engine::Impl::continue_answer(ConversationId id, const GenerateParams& params,
                                               const TokenCallback& on_token, const std::atomic<bool>* cancel) {
    LoadedModel& m = require_model();
    Sequence& conv = find(id);
    retokenize_if_stale(conv);
    return llamadesk::continue_answer(m, conv, [this](const auto& evicted) { note_evictions(evicted); }, params,
                                      on_token, cancel);
}

TurnSize Engine::Impl::measure_turn(ConversationId id, const std::string& user_text,
                                    const std::string& system_prompt) {
    LoadedModel& m = require_model();
    Sequence& conv = find(id);
    retokenize_if_stale(conv);
    return measure_user_turn(*m.tokenizer, conv, user_text, system_prompt, m.context_length());
}

void Engine::Impl::set_snapshots(const SnapshotSettings& settings) {
    if (!settings.folder.empty() && settings.budget_bytes <= 0)
        fail(ErrorCode::InvalidArgument, "the KV snapshot budget must be more than 0 bytes, not " +
                                             std::to_string(settings.budget_bytes));
    std::unique_ptr<SnapshotStore> store = model ? open_snapshot_store(*model, settings) : nullptr;
    snapshot_settings = settings;
    if (model) model->snapshots = std::move(store);
}

void Engine::Impl::save_snapshot(ConversationId id) {
    const Sequence& conv = find(id);
    const LoadedModel& m = require_model();
    if (m.snapshots) save_to_disk(m, conv);
}

ConversationStats Engine::Impl::stats(ConversationId id) const {
    return model ? conversation_stats_of(find(id), model->pool.get(), model->context_length())
                 : conversation_stats_of(find(id), nullptr, 0);
}

CacheLayout Engine::Impl::cache_layout(ConversationId id) const {
    const Sequence& conv = find(id);
    const LoadedModel& m = require_model();
    const KvLayout& layout = m.pool->layout();
    CacheLayout out;
    out.n_layers = layout.n_layers;
    out.block_size = layout.block_size;
    out.n_kv_heads = layout.n_kv_heads;
    out.head_dim = layout.head_dim;
    out.dtype = dtype_name(m.backend->kv_dtype());
    out.device = m.backend->kind() == BackendKind::Cpu ? m.backend->name() : m.backend->device_description();
    out.bytes_per_block = m.pool->bytes_per_block();
    out.block_table = m.pool->block_table(conv.id);
    for (int32_t block : out.block_table) {
        out.block_users.push_back(m.pool->users(block));
        out.block_restored.push_back(m.pool->restored(block));
    }
    out.bytes_used = int64_t(out.block_table.size()) * out.bytes_per_block;
    out.cached_tokens = m.pool->n_cached(conv.id);
    return out;
}

std::vector<int> Engine::Impl::tokenize(const std::string& text, bool add_bos) const {
    return require_model().tokenizer->encode(text, add_bos);
}

PerplexityResult Engine::Impl::perplexity(const std::string& text, const PerplexityProgress& on_progress) {
    return score_perplexity(require_model(), text, [this](const auto& evicted) { note_evictions(evicted); },
                            on_progress);
}

}  // namespace llamadesk
