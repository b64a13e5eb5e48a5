#include "engine/generation.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <utility>

#include "chat/chat_template.h"
#include "core/error.h"
#include "core/exception_status.h"
#include "core/stopwatch.h"
#include "engine/context_shift.h"
#include "engine/kv_snapshots.h"
#include "engine/stop_strings.h"
#include "sampling/sampler.h"

namespace llamadesk {

namespace {

class AnswerGenerator {
public:
    // keep: the conversations of a batch, whose blocks making room must not take (read at each
    // reservation: a batch changes as answers join and end).
    AnswerGenerator(LoadedModel& m, Sequence& conv, const EvictionHandler& on_evicted,
                    const GenerateParams& params, const TokenCallback& on_token,
                    const std::atomic<bool>* cancel, const std::vector<ConversationId>* keep = nullptr)
        : m_(m), conv_(conv), on_evicted_(on_evicted), params_(params), on_token_(on_token),
          cancel_(cancel), keep_(keep), sampler_(m.vocab_size(), params.sampling), stops_(params.stop_strings) {}

    GenerationResult run(const std::string& user_text) {
        begin_turn(user_text);
        return decode_all(prefill([this] { undo_turn(); }));
    }

    GenerationResult resume() {
        reopen_turn();
        return decode_all(prefill([this] { close_turn(); }));
    }

    // A batch's answer joins in steps: begin() adds the user turn, then each prefill_step() runs
    // at most max_tokens of it through the model, until one returns the first answer token (not
    // yet in the history). Either throws, leaving the conversation as it was, when nothing can be
    // answered.
    void begin(const std::string& user_text) {
        begin_turn(user_text);
        guarded_prefill([this] { prepare_prefill(); }, [this] { undo(); });
    }
    // ... or reopens the last turn's answer, as resume() does.
    void begin_resume() {
        reopening_ = true;
        reopen_turn();
        guarded_prefill([this] { prepare_prefill(); }, [this] { undo(); });
    }
    std::optional<int32_t> prefill_step(int max_tokens) {
        return guarded_prefill([&] { return prefill_some(max_tokens); }, [this] { undo(); });
    }

    // One decode step, in two halves. accept() takes the token sampled last into the answer and
    // says whether it goes on; if so, the token runs through the model at pos() (alone or in a
    // batch) and sample() picks the next one from its logits.
    bool accept(int32_t token) {
        if (!text_) text_.emplace(*m_.tokenizer, conv_.history.back());
        // Any end-of-generation token ends the answer, unshown; BOS too: llama2.c's stories models
        // separate stories with it.
        if (m_.tokenizer->ends_generation(token) || token == m_.tokenizer->bos_id()) {
            result_.stop_reason = StopReason::Eos;
            return false;
        }
        conv_.history.push_back(token);
        result_.tokens.push_back(token);
        ++result_.stats.generated_tokens;
        emit(stops_.push(text_->push(token)));
        if (stops_.stopped()) {
            result_.stop_reason = StopReason::StopString;
            return false;
        }
        if (params_.max_new_tokens > 0 && result_.stats.generated_tokens >= params_.max_new_tokens) {
            result_.stop_reason = StopReason::MaxTokens;
            return false;
        }
        if (cancel_ && cancel_->load(std::memory_order_relaxed)) {
            result_.stop_reason = StopReason::Cancelled;
            return false;
        }
        if (pos() + 1 >= m_.context_length()) {
            if (!params_.shift_when_full) {
                result_.stop_reason = StopReason::ContextFull;
                return false;
            }
            shift_out_older_half();
        }
        reserve(pos() + 1);
        return true;
    }
    int pos() const { return int(conv_.history.size()) - 1; }
    int32_t sample(float* logits) {  // the sampler works in place
        const int32_t token = sampler_.sample(logits, recent());
        m_.pool->set_cached(conv_.id, pos() + 1, conv_.history);
        return token;
    }
    // The step alone, as generate() decodes: a device backend samples on the device.
    int32_t decode_alone(int32_t token) {
        const int p = pos();
        token = m_.backend->decode_and_sample(token, p, m_.pool->table(conv_.id), sampler_, recent());
        m_.pool->set_cached(conv_.id, p + 1, conv_.history);
        return token;
    }
    // The answer stops here on the exception being handled; what was generated stays.
    void fail_now() {
        result_.status = status_from_current_exception();
        result_.stop_reason = StopReason::Error;
    }
    // Closes the answer: the text held back for stop strings, the turn's end, the figures.
    GenerationResult finish() {
        if (text_ && !stops_.stopped()) emit(stops_.push(text_->flush()) + stops_.flush(), /*force=*/false);
        finish_turn();
        return std::move(result_);
    }

private:
    // undo leaves the conversation as it was when nothing could be answered.
    template <class Undo>
    int32_t prefill(Undo&& undo) {
        return guarded_prefill(
            [this] {
                prepare_prefill();
                return *prefill_some(std::numeric_limits<int>::max());
            },
            undo);
    }
    template <class Step, class Undo>
    auto guarded_prefill(Step&& step, Undo&& undo) -> decltype(step()) {
        try {
            return step();
        } catch (...) {
            undo();
            throw;
        }
    }

    GenerationResult decode_all(int32_t token) {
        try {
            while (accept(token)) token = decode_alone(token);
        } catch (...) {
            fail_now();
        }
        return finish();
    }

    // Renders the turn and makes room for it; nothing changes unless it fits.
    void begin_turn(const std::string& user_text) {
        const bool first_turn = conv_.turns.empty();
        const std::string& system_prompt = first_turn ? params_.system_prompt : conv_.system_prompt;
        const std::vector<int> turn =
            render_user_turn(*m_.tokenizer, conv_.format, first_turn, system_prompt, user_text, conv_.date);
        const TurnSize size{int(turn.size()), 0, int(conv_.history.size()), m_.context_length()};
        const int before = size.history_tokens;
        const int after = before + size.message_tokens;
        if (after == 0) fail(ErrorCode::InvalidArgument, "there is no text to continue");
        if (!size.fits())
            fail(ErrorCode::ContextFull,
                 "the conversation holds " + std::to_string(before) + " tokens and this message adds " +
                     std::to_string(turn.size()) + ", which leaves no room to answer within the model's context of " +
                     std::to_string(m_.context_length()) + " tokens");
        // Blocks another conversation computed for the same tokens (a shared system prompt, a
        // regenerate) are taken before making room, so making room cannot evict them first.
        std::vector<int32_t> tokens = conv_.history;
        tokens.insert(tokens.end(), turn.begin(), turn.end());
        const int cached_before = m_.pool->n_cached(conv_.id);
        result_.stats.shared_tokens = m_.pool->share_prefix(conv_.id, tokens, after - 1) - cached_before;
        try {
            reserve(after);
        } catch (...) {
            m_.pool->truncate(conv_.id, before);
            throw;
        }

        if (first_turn) conv_.system_prompt = params_.system_prompt;
        known_end_ = before;
        conv_.history = std::move(tokens);
        conv_.turns.push_back(Turn{user_text, {}, before, after});
        result_.stats.prompt_tokens = int(turn.size());
    }

    // Leaves the conversation as begin() or begin_resume() found it.
    void undo() {
        if (reopening_)
            close_turn();
        else
            undo_turn();
    }

    void undo_turn() {
        const int before = conv_.turns.back().begin;
        conv_.turns.pop_back();
        conv_.history.resize(size_t(before));
        m_.pool->truncate(conv_.id, before);
        if (conv_.turns.empty()) conv_.system_prompt.clear();
    }

    // Takes the closing EOS back off the last turn, so decoding goes on where the answer stopped.
    void reopen_turn() {
        if (conv_.turns.empty()) fail(ErrorCode::InvalidArgument, "there is no answer to continue");
        Turn& turn = conv_.turns.back();
        const std::vector<int> end = answer_terminator(*m_.tokenizer, conv_.format);
        if (conv_.history.size() >= end.size() &&
            std::equal(end.begin(), end.end(), conv_.history.end() - std::ptrdiff_t(end.size())))
            closing_ = end;
        const int open_size = int(conv_.history.size() - closing_.size());
        if (open_size + 1 >= m_.context_length())
            fail(ErrorCode::ContextFull, "the answer already fills the model's context of " +
                                             std::to_string(m_.context_length()) + " tokens");
        m_.pool->truncate(conv_.id, open_size);
        reserve(open_size);
        known_end_ = open_size;
        conv_.history.resize(size_t(open_size));
        turn.end = open_size;
        answer_before_ = turn.answer;
    }

    // Puts the closing tokens back after a resume that could not decode.
    void close_turn() {
        conv_.history.insert(conv_.history.end(), closing_.begin(), closing_.end());
        conv_.turns.back().end = int(conv_.history.size());
    }

    // Finds what history[n_cached..] lacks (restoring blocks from disk first) and makes room to
    // compute it; prefill_some() then runs it through the model.
    void prepare_prefill() {
        const int end = int(conv_.history.size());
        // At least the last token runs, since its logits choose the first answer token.
        GenerationStats& s = result_.stats;
        if (m_.snapshots) s.restored_tokens = restore_from_disk(m_, conv_.id, conv_.history, end - 1, known_end_);
        std::vector<Eviction> evicted;
        prefill_next_ = m_.pool->prepare_write(conv_.id, std::min(m_.pool->n_cached(conv_.id), end - 1), end,
                                               &evicted, keep());
        if (!evicted.empty()) on_evicted_(evicted);
        s.context_tokens = end;
        s.prefilled_tokens = end - prefill_next_;
        s.reprefilled_tokens = std::max(0, std::min(conv_.evicted_tokens, end) - prefill_next_);
        conv_.evicted_tokens = 0;
        m_.pool->count_reprefill(s.reprefilled_tokens);
    }

    // Runs up to max_tokens more of the prefill (the backend chunks them further); after the last,
    // samples the first answer token.
    std::optional<int32_t> prefill_some(int max_tokens) {
        const int end = int(conv_.history.size());
        const int n = std::min(max_tokens, end - prefill_next_);
        std::vector<float> logits(size_t(m_.vocab_size()));  // (vocab_size,): only the last step's are used
        Stopwatch prefill_clock;
        m_.backend->forward(std::span<const int32_t>(conv_.history.data() + prefill_next_, size_t(n)), prefill_next_,
                            m_.pool->table(conv_.id), logits.data());
        prefill_next_ += n;
        m_.pool->set_cached(conv_.id, prefill_next_, conv_.history);
        GenerationStats& s = result_.stats;
        s.prefill_ms += prefill_clock.elapsed_ms();
        if (prefill_next_ < end) return std::nullopt;
        s.prefill_tokens_per_s = tokens_per_second(s.prefilled_tokens, s.prefill_ms);

        const int32_t token = sampler_.sample(logits.data(), recent());
        s.time_to_first_token_ms = call_clock_.elapsed_ms();
        decode_clock_.restart();
        return token;
    }

    // Closes the answer in the history (EOS for Llama2Chat) so the next turn starts after it;
    // an answer that filled the context stays open, as nothing can follow it anyway.
    void finish_turn() {
        const std::vector<int> end = answer_terminator(*m_.tokenizer, conv_.format);
        if (conv_.history.size() + end.size() <= size_t(m_.context_length()))
            conv_.history.insert(conv_.history.end(), end.begin(), end.end());
        Turn& turn = conv_.turns.back();
        turn.answer = answer_before_ + result_.text;
        turn.end = int(conv_.history.size());
        refresh_stats();
    }

    // Hands a piece to the caller with fresh figures. Every token gets a call (force), even
    // with empty text, so decode tokens/s updates per token.
    void emit(const std::string& piece, bool force = true) {
        result_.text += piece;
        if (!on_token_ || (piece.empty() && !force)) return;
        refresh_stats();
        on_token_(piece, result_.stats);
    }

    void refresh_stats() {
        GenerationStats& s = result_.stats;
        s.decode_ms = decode_clock_.elapsed_ms();
        // The first token came from the prefill; the rest are decode steps.
        s.decode_tokens_per_s = tokens_per_second(std::max(0, s.generated_tokens - 1), s.decode_ms);
        s.conversation = conversation_stats_of(conv_, m_.pool.get(), m_.context_length());
        s.pool = m_.pool->stats();
    }

    // As llama.cpp's context shift: the first kContextSinkTokens stay, then half of the rest goes.
    // The newest token is not cached yet: it runs at its new position next.
    void shift_out_older_half() {
        const int keep = std::min(kContextSinkTokens, pos());
        const int n = (pos() - keep) / 2;
        if (n <= 0) fail(ErrorCode::ContextFull, "the context of " + std::to_string(m_.context_length()) +
                                                     " tokens is too small to shift");
        shift_context(m_, conv_, keep, n);
        ++result_.stats.context_shifts;
    }

    void reserve(int n_tokens) {
        const std::vector<Eviction> evicted = m_.pool->reserve(conv_.id, n_tokens, keep());
        if (!evicted.empty()) on_evicted_(evicted);
    }
    std::span<const ConversationId> keep() const {
        return keep_ ? std::span<const ConversationId>(*keep_) : std::span<const ConversationId>();
    }

    std::span<const int32_t> recent() const {
        const size_t n = std::min(conv_.history.size(), size_t(std::max(0, params_.sampling.repeat_last_n)));
        return std::span<const int32_t>(conv_.history).last(n);
    }

    LoadedModel& m_;
    Sequence& conv_;
    const EvictionHandler& on_evicted_;
    const GenerateParams& params_;
    const TokenCallback& on_token_;
    const std::atomic<bool>* cancel_;
    const std::vector<ConversationId>* keep_;
    Sampler sampler_;
    StopStringFilter stops_;
    Stopwatch call_clock_, decode_clock_;
    std::optional<StreamDecoder> text_;  // the answer's text so far, from its first decoded token
    std::string answer_before_;  // resume(): the text the answer had already
    std::vector<int> closing_;   // resume(): the tokens that had closed it
    int known_end_ = 0;          // history positions that existed before this call
    int prefill_next_ = 0;       // the first position the prefill has still to compute
    bool reopening_ = false;     // begin_resume(): the turn was reopened, not added
    GenerationResult result_;
};

}  // namespace

GenerationResult generate_answer(LoadedModel& model, Sequence& conv, const EvictionHandler& on_evicted,
                                 const std::string& user_text, const GenerateParams& params,
                                 const TokenCallback& on_token, const std::atomic<bool>* cancel) {
    return AnswerGenerator(model, conv, on_evicted, params, on_token, cancel).run(user_text);
}

GenerationResult continue_answer(LoadedModel& model, Sequence& conv, const EvictionHandler& on_evicted,
                                 const GenerateParams& params, const TokenCallback& on_token,
                                 const std::atomic<bool>* cancel) {
    return AnswerGenerator(model, conv, on_evicted, params, on_token, cancel).resume();
}

namespace {

// One answer of a batch: joining (its prompt is being prefilled) until it has its first token,
// then under way.
struct BatchMember {
    size_t index;  // its place among the results
    const BatchRequest* request;
    std::unique_ptr<AnswerGenerator> answer;
    std::optional<int32_t> token;  // the token to accept next; empty while joining
    bool listed = false;           // its conversation is in the batch's ids
};

GenerationResult refused_start() {
    GenerationResult result;
    result.status = status_from_current_exception();
    result.stop_reason = result.status.code == ErrorCode::ContextFull ? StopReason::ContextFull : StopReason::Error;
    return result;
}

}  // namespace

std::vector<GenerationResult> generate_answers(LoadedModel& model,
                                               const std::function<Sequence&(ConversationId)>& resolve,
                                               const EvictionHandler& on_evicted, std::span<const BatchRequest> requests,
                                               const BatchAdmission& admit) {
    std::deque<BatchRequest> held;  // admitted requests, at stable addresses for their generators
    std::vector<GenerationResult> results;
    std::vector<BatchMember> members;   // in the order they came: the oldest joiner prefills first
    std::vector<ConversationId> ids;    // the members' conversations, which making room must not take
    const auto done = [&](BatchMember& m, GenerationResult result) {
        results[m.index] = std::move(result);
        if (m.request->on_finished) m.request->on_finished(results[m.index]);
        m.answer.reset();
    };
    const auto join = [&](const BatchRequest& r) {
        results.emplace_back();
        BatchMember& m = members.emplace_back(BatchMember{results.size() - 1, &r, nullptr, std::nullopt});
        try {
            const Status sampling = validate_sampling(r.params.sampling);
            if (!sampling.ok()) throw EngineError(sampling.code, sampling.message);
            if (std::find(ids.begin(), ids.end(), r.conversation) != ids.end())
                fail(ErrorCode::InvalidArgument, "conversation " + std::to_string(r.conversation) +
                                                     " already has an answer under way; it can give one at a time");
            Sequence& conv = resolve(r.conversation);
            ids.push_back(conv.id);
            m.listed = true;
            m.answer = std::make_unique<AnswerGenerator>(model, conv, on_evicted, r.params, r.on_token, r.cancel, &ids);
            if (r.resume)
                m.answer->begin_resume();
            else
                m.answer->begin(r.user_text);
        } catch (...) {  // nothing changed in this conversation; the others go on
            if (std::exchange(m.listed, false)) ids.pop_back();
            done(m, refused_start());
        }
    };
    const auto drop_finished = [&] {
        std::erase_if(members, [&](const BatchMember& m) {
            if (m.answer) return false;
            if (m.listed) std::erase(ids, m.request->conversation);
            return true;
        });
    };

    for (const BatchRequest& r : requests) join(r);
    std::vector<float> logits;
    for (;;) {
        drop_finished();  // a conversation whose answer ended may be asked again right away
        if (admit)
            for (BatchRequest& r : admit()) join(held.emplace_back(std::move(r)));
        drop_finished();
        if (members.empty()) break;

        // One chunk of the oldest joining prompt.
        for (BatchMember& m : members) {
            if (m.token) continue;
            try {
                m.token = m.answer->prefill_step(model.backend->chunk_tokens());
            } catch (...) {
                done(m, refused_start());
            }
            break;
        }

        // One token of every answer under way.
        std::vector<BatchMember*> going;
        for (BatchMember& m : members) {
            if (!m.answer || !m.token) continue;
            bool goes = false;
            try {
                goes = m.answer->accept(*m.token);
            } catch (...) {
                m.answer->fail_now();
            }
            if (goes) going.push_back(&m);
            else done(m, m.answer->finish());
        }
        if (going.empty()) continue;
        if (going.size() == 1) {  // one answer under way decodes as generate() does
            try {
                going[0]->token = going[0]->answer->decode_alone(*going[0]->token);
            } catch (...) {
                going[0]->answer->fail_now();
                done(*going[0], going[0]->answer->finish());
            }
            continue;
        }
        // Tables are read after every accept(): making room for one may have grown another's.
        std::vector<BatchToken> batch;
        for (BatchMember* m : going)
            batch.push_back({*m->token, m->answer->pos(), model.pool->table(m->request->conversation)});
        logits.resize(going.size() * size_t(model.vocab_size()));
        try {
            model.backend->decode_batch(batch, logits.data());
            for (size_t k = 0; k < going.size(); ++k)
                going[k]->token = going[k]->answer->sample(logits.data() + k * size_t(model.vocab_size()));
        } catch (...) {
            for (BatchMember* m : going) {
                m->answer->fail_now();
                done(*m, m->answer->finish());
            }
        }
    }
    return results;
}

}  // namespace llamadesk
