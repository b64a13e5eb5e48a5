#include "engine/generation.h"

#include <algorithm>
#include <span>

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
    AnswerGenerator(LoadedModel& m, Conversation& conv, const EvictionHandler& on_evicted,
                    const GenerateParams& params, const TokenCallback& on_token,
                    const std::atomic<bool>* cancel)
        : m_(m), conv_(conv), on_evicted_(on_evicted), params_(params), on_token_(on_token),
          cancel_(cancel), sampler_(m.vocab_size(), params.sampling), stops_(params.stop_strings) {}

    GenerationResult run(const std::string& user_text) {
        begin_turn(user_text);
        return answer([this] { undo_turn(); });
    }

    GenerationResult resume() {
        reopen_turn();
        return answer([this] { close_turn(); });
    }

private:
    // undo leaves the conversation as it was when nothing could be answered.
    template <class Undo>
    GenerationResult answer(Undo&& undo) {
        int32_t first = 0;
        try {
            first = prefill_and_sample();
        } catch (...) {
            undo();
            throw;
        }
        decode_from(first);
        finish_turn();
        return std::move(result_);
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
        const int start = m_.pool->prepare_write(conv_.id, std::min(m_.pool->n_cached(conv_.id), end - 1), end, &evicted);
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

    // `token` has been sampled but is not yet in the history.
    void decode_from(int32_t token) {
        StreamDecoder text(*m_.tokenizer, conv_.history.back());
        // BOS ends an answer too: llama2.c's stories models separate stories with it.
        const int eos = m_.tokenizer->eos_id(), bos = m_.tokenizer->bos_id();
        const int max_new = params_.max_new_tokens;
        try {
            for (;;) {
                if (token == eos || token == bos) { result_.stop_reason = StopReason::Eos; break; }
                conv_.history.push_back(token);
                result_.tokens.push_back(token);
                ++result_.stats.generated_tokens;
                emit(stops_.push(text.push(token)));
                if (stops_.stopped()) { result_.stop_reason = StopReason::StopString; break; }
                if (max_new > 0 && result_.stats.generated_tokens >= max_new) {
                    result_.stop_reason = StopReason::MaxTokens;
                    break;
                }
                if (cancel_ && cancel_->load(std::memory_order_relaxed)) {
                    result_.stop_reason = StopReason::Cancelled;
                    break;
                }
                const int pos = int(conv_.history.size()) - 1;
                if (pos + 1 >= m_.context_length()) { result_.stop_reason = StopReason::ContextFull; break; }
                reserve(pos + 1);
                token = m_.backend->decode_and_sample(token, pos, m_.pool->table(conv_.id), sampler_, recent());
                m_.pool->set_cached(conv_.id, pos + 1, conv_.history);
            }
            if (!stops_.stopped()) emit(stops_.push(text.flush()) + stops_.flush(), /*force=*/false);
        } catch (...) {
            result_.status = status_from_current_exception();
            result_.stop_reason = StopReason::Error;
        }
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
        const std::vector<Eviction> evicted = m_.pool->reserve(conv_.id, n_tokens);
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
    Sampler sampler_;
    StopStringFilter stops_;
    Stopwatch call_clock_, decode_clock_;
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

}  // namespace llamadesk
