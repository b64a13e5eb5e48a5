#include "engine/generation.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <span>
#include <utility>

#include "chat/chat_template.h"
#include "core/error.h"
#include "core/exception_status.h"
#include "core/stopwatch.h"
#include "engine/kv_snapshots.h"
#include "engine/stop_strings.h"
#include "sampling/sampler.h"

namespace llamadesk {

namespace {

class AnswerGenerator {
public:
    // keep: the other conversations of a batch, whose blocks making room must not take.
    AnswerGenerator(LoadedModel& m, Conversation& conv, const EvictionHandler& on_evicted,
                    const GenerateParams& params, const TokenCallback& on_token,
                    const std::atomic<bool>* cancel, std::span<const ConversationId> keep = {})
        : m_(m), conv_(conv), on_evicted_(on_evicted), params_(params), on_token_(on_token),
          cancel_(cancel), keep_(keep), sampler_(m.vocab_size(), params.sampling), stops_(params.stop_strings) {}

    GenerationResult run(const std::string& user_text) { return decode_all(start(user_text)); }

    GenerationResult resume() {
        reopen_turn();
        return decode_all(prefill([this] { close_turn(); }));
    }

    // Adds the user turn and prefills it; returns the first answer token, not yet in the history.
    // Throws, leaving the conversation as it was, when nothing can be answered.
    int32_t start(const std::string& user_text) {
        begin_turn(user_text);
        return prefill([this] { undo_turn(); });
    }

    // One decode step, in two halves. accept() takes the token sampled last into the answer and
    // says whether it goes on; if so, the token runs through the model at pos() (alone or in a
    // batch) and sample() picks the next one from its logits.
    bool accept(int32_t token) {
        if (!text_) text_.emplace(*m_.tokenizer, conv_.history.back());
        // BOS ends an answer too: llama2.c's stories models separate stories with it.
        if (token == m_.tokenizer->eos_id() || token == m_.tokenizer->bos_id()) {
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
            result_.stop_reason = StopReason::ContextFull;
            return false;
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
        try {
            return prefill_and_sample();
        } catch (...) {
            undo();
            throw;
        }
    }

    GenerationResult decode_all(int32_t token) {
        try {
            while (accept(token)) {
                const int p = pos();
                token = m_.backend->decode_and_sample(token, p, m_.pool->table(conv_.id), sampler_, recent());
                m_.pool->set_cached(conv_.id, p + 1, conv_.history);
            }
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
            render_user_turn(*m_.tokenizer, conv_.format, first_turn, system_prompt, user_text);
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

    // Runs history[n_cached..] through the model (the backend chunks it) and samples the first
    // answer token.
    int32_t prefill_and_sample() {
        const int end = int(conv_.history.size());
        // At least the last token runs, since its logits choose the first answer token.
        GenerationStats& s = result_.stats;
        if (m_.snapshots) s.restored_tokens = restore_from_disk(m_, conv_.id, conv_.history, end - 1, known_end_);
        std::vector<Eviction> evicted;
        const int start =
            m_.pool->prepare_write(conv_.id, std::min(m_.pool->n_cached(conv_.id), end - 1), end, &evicted, keep_);
        if (!evicted.empty()) on_evicted_(evicted);
        s.prefilled_tokens = end - start;
        s.reprefilled_tokens = std::max(0, std::min(conv_.evicted_tokens, end) - start);
        conv_.evicted_tokens = 0;
        m_.pool->count_reprefill(s.reprefilled_tokens);

        std::vector<float> logits(size_t(m_.vocab_size()));  // (vocab_size,)
        Stopwatch prefill_clock;
        m_.backend->forward(std::span<const int32_t>(conv_.history.data() + start, size_t(end - start)), start,
                            m_.pool->table(conv_.id), logits.data());
        m_.pool->set_cached(conv_.id, end, conv_.history);
        s.prefill_ms = prefill_clock.elapsed_ms();
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

    void reserve(int n_tokens) {
        const std::vector<Eviction> evicted = m_.pool->reserve(conv_.id, n_tokens, keep_);
        if (!evicted.empty()) on_evicted_(evicted);
    }

    std::span<const int32_t> recent() const {
        const size_t n = std::min(conv_.history.size(), size_t(std::max(0, params_.sampling.repeat_last_n)));
        return std::span<const int32_t>(conv_.history).last(n);
    }

    LoadedModel& m_;
    Conversation& conv_;
    const EvictionHandler& on_evicted_;
    const GenerateParams& params_;
    const TokenCallback& on_token_;
    const std::atomic<bool>* cancel_;
    std::span<const ConversationId> keep_;
    Sampler sampler_;
    StopStringFilter stops_;
    Stopwatch call_clock_, decode_clock_;
    std::optional<StreamDecoder> text_;  // the answer's text so far, from its first decoded token
    std::string answer_before_;  // resume(): the text the answer had already
    std::vector<int> closing_;   // resume(): the tokens that had closed it
    int known_end_ = 0;          // history positions that existed before this call
    GenerationResult result_;
};

}  // namespace

GenerationResult generate_answer(LoadedModel& model, Conversation& conv, const EvictionHandler& on_evicted,
                                 const std::string& user_text, const GenerateParams& params,
                                 const TokenCallback& on_token, const std::atomic<bool>* cancel) {
    return AnswerGenerator(model, conv, on_evicted, params, on_token, cancel).run(user_text);
}

GenerationResult continue_answer(LoadedModel& model, Conversation& conv, const EvictionHandler& on_evicted,
                                 const GenerateParams& params, const TokenCallback& on_token,
                                 const std::atomic<bool>* cancel) {
    return AnswerGenerator(model, conv, on_evicted, params, on_token, cancel).resume();
}

std::vector<GenerationResult> generate_answers(LoadedModel& model, std::span<Conversation* const> convs,
                                               const EvictionHandler& on_evicted, std::span<const BatchRequest> requests) {
    const size_t n = requests.size();
    std::vector<ConversationId> ids;
    for (const Conversation* conv : convs) ids.push_back(conv->id);
    std::vector<GenerationResult> results(n);
    std::vector<std::unique_ptr<AnswerGenerator>> answers(n);  // null: finished
    std::vector<int32_t> tokens(n);
    for (size_t i = 0; i < n; ++i) {
        const BatchRequest& r = requests[i];
        auto answer = std::make_unique<AnswerGenerator>(model, *convs[i], on_evicted, r.params, r.on_token, r.cancel, ids);
        try {
            tokens[i] = answer->start(r.user_text);
            answers[i] = std::move(answer);
        } catch (...) {  // nothing changed in this conversation; the others go on
            results[i].status = status_from_current_exception();
            results[i].stop_reason =
                results[i].status.code == ErrorCode::ContextFull ? StopReason::ContextFull : StopReason::Error;
        }
    }

    std::vector<float> logits;
    for (;;) {
        std::vector<size_t> going;  // answers that run a token this step
        for (size_t i = 0; i < n; ++i) {
            if (!answers[i]) continue;
            bool goes = false;
            try {
                goes = answers[i]->accept(tokens[i]);
            } catch (...) {
                answers[i]->fail_now();
            }
            if (goes) going.push_back(i);
            else results[i] = std::exchange(answers[i], nullptr)->finish();
        }
        if (going.empty()) break;
        // Tables are read after every accept(): making room for one may have grown another's.
        std::vector<BatchToken> batch;
        for (size_t i : going) batch.push_back({tokens[i], answers[i]->pos(), model.pool->table(ids[i])});
        logits.resize(going.size() * size_t(model.vocab_size()));
        try {
            model.backend->decode_batch(batch, logits.data());
            for (size_t k = 0; k < going.size(); ++k)
                tokens[going[k]] = answers[going[k]]->sample(logits.data() + k * size_t(model.vocab_size()));
        } catch (...) {
            for (size_t i : going) {
                answers[i]->fail_now();
                results[i] = std::exchange(answers[i], nullptr)->finish();
            }
        }
    }
    return results;
}

}  // namespace llamadesk
