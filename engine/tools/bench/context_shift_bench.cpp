// llamadesk-shift-bench: what a context shift saves, and what it costs in accuracy.
//   1. A conversation fills --context; its older half of turns is dropped. The time to the next
//      answer's first token (the drop included) is printed against a conversation given the same
//      remaining turns as text, which prefills them all: what dropping turns cost before the shift.
//      Both answers' first tokens are timed by the engine (GenerationStats::time_to_first_token_ms).
//   2. The mean NLL of --continuation tokens after a shift (keep 4, drop half) against computing the
//      kept tokens from scratch at their new positions (engine internals, one conversation each).
//   3. Decode tok/s over --windows (3) x --context tokens with shift_when_full, per context-long window.
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/stopwatch.h"
#include "engine/context_shift.h"
#include "engine/loaded_model.h"
#include "llamadesk/engine.h"
#include "../tool_options.h"
#include "engine_bench.h"

using namespace llamadesk;
using llamadesk::bench::check;

namespace {

const char* usage() {
    return "usage: llamadesk-shift-bench --model PATH [options]\n"
           "\n"
           "  --context N        the context the model is loaded with (default 1024)\n"
           "  --continuation N   tokens scored after the shift (default 64)\n"
           "  --kv-type T        f16 (default), f32 or q8_0\n"
           "  --threads N        CPU threads (default: one per physical core)\n"
           "  --seed N           the decode run's sampling seed (default 1)\n"
           "  --windows N        context-long windows decoded in part 3 (default 3; 0 skips it)\n";
}

const char* kParagraph =
    "The cache keeps the keys and values of every position, so a follow-up only runs its own tokens "
    "through the model. When a conversation outgrows the context, its oldest turns leave the model's view. ";

// Mean negative log-likelihood of tokens[from..] given everything before, from one forward pass
// over them on top of what id's cache holds.
double mean_nll(LoadedModel& m, ConversationId id, const std::vector<int32_t>& tokens, int from) {
    const int n = int(tokens.size()) - from;
    m.pool->reserve(id, int(tokens.size()));
    std::vector<float> logits(size_t(n) * size_t(m.vocab_size()));
    m.backend->forward(std::span<const int32_t>(tokens.data() + from, size_t(n)), from, m.pool->table(id),
                       logits.data(), true);
    double nll = 0;
    for (int i = 0; i + 1 < n; ++i) {
        const float* row = logits.data() + size_t(i) * size_t(m.vocab_size());
        double mx = row[0], sum = 0;
        for (int v = 0; v < m.vocab_size(); ++v) mx = std::max(mx, double(row[v]));
        for (int v = 0; v < m.vocab_size(); ++v) sum += std::exp(double(row[v]) - mx);
        nll += mx + std::log(sum) - row[tokens[size_t(from + i + 1)]];
    }
    return nll / (n - 1);
}

}  // namespace

int main(int argc, char** argv) {
    try {
        LoadParams load;
        load.backend = BackendKind::Cpu;
        load.context_length = 1024;
        int continuation = 64;
        int64_t seed = 1;
        int windows = 3;
        const bool run = tools::read_options(argc, argv, usage(), [&](const std::string& arg, const std::string& value) {
            if (arg == "--model") load.model_path = value;
            else if (arg == "--context") load.context_length = tools::parse_int(arg, value);
            else if (arg == "--continuation") continuation = tools::parse_int(arg, value);
            else if (arg == "--kv-type") load.kv_cache_type = tools::parse_kv_type(arg, value);
            else if (arg == "--threads") load.n_threads = tools::parse_int(arg, value);
            else if (arg == "--seed") seed = tools::parse_int(arg, value);
            else if (arg == "--windows") windows = tools::parse_int(arg, value);
            else return false;
            return true;
        });
        if (!run) return 0;
        if (load.model_path.empty()) fail(ErrorCode::InvalidArgument, "--model is needed (see --help)");
        const int context = load.context_length;

        // 1. Dropping turns at a full context: shifted against prefilled again.
        {
            Engine e;
            check(e.load(load), "load");
            const ConversationId a = e.create_conversation(ChatFormat::Llama2Chat);
            GenerateParams answer;
            answer.max_new_tokens = 8;
            answer.sampling.temperature = 0;
            std::string user;
            while (int(user.size()) < context / 2) user += kParagraph;  // about context / 8 tokens a turn
            std::vector<ChatTurn> turns;
            ConversationStats stats;
            for (;;) {
                check(e.conversation_stats(a, &stats), "stats");
                TurnSize size;
                check(e.measure_turn(a, user, "", &size), "measure");
                if (stats.history_tokens + size.message_tokens + answer.max_new_tokens + 64 >= context) break;
                const GenerationResult r = e.generate(a, user, answer);
                check(r.status, "fill");
                turns.push_back({user, r.text});
            }
            const int drop = int(turns.size()) / 2;
            Stopwatch drop_clock;
            check(e.drop_oldest_turns(a, drop, ""), "drop");
            const double drop_ms = drop_clock.elapsed_ms();
            const GenerationResult shifted = e.generate(a, "And then?", answer);
            check(shifted.status, "after the shift");
            const double shifted_ms = drop_ms + shifted.stats.time_to_first_token_ms;

            const ConversationId b = e.create_conversation(ChatFormat::Llama2Chat);
            check(e.restore_turns(b, std::vector<ChatTurn>(turns.begin() + drop, turns.end()), ""), "restore");
            const GenerationResult rebuilt = e.generate(b, "And then?", answer);
            check(rebuilt.status, "after the rebuild");
            const double rebuilt_ms = rebuilt.stats.time_to_first_token_ms;
            std::printf("drop %d of %d turns at %d of %d tokens: next token after %.1f ms shifted (the shift "
                        "%.1f ms, %d prefilled) vs %.1f ms prefilled again (%d prefilled): %.1fx\n",
                        drop, int(turns.size()), stats.history_tokens, context, shifted_ms, drop_ms,
                        shifted.stats.prefilled_tokens, rebuilt_ms, rebuilt.stats.prefilled_tokens,
                        rebuilt_ms / shifted_ms);
        }

        // 2. Accuracy: the continuation after a shift against the kept tokens computed afresh.
        {
            std::unique_ptr<LoadedModel> m = load_model(load);
            std::vector<int32_t> tokens{int32_t(m->tokenizer->bos_id())};
            std::string text;
            while (int(tokens.size()) < context + continuation) {
                text += kParagraph;
                tokens = m->tokenizer->encode(text, true);
            }
            tokens.resize(size_t(context - 1));
            const std::vector<int32_t> tail(tokens.end() - continuation, tokens.end());
            m->pool->reserve(1, int(tokens.size()) - continuation);
            std::vector<float> logits(size_t(m->vocab_size()));
            const std::vector<int32_t> head(tokens.begin(), tokens.end() - continuation);
            m->backend->forward(head, 0, m->pool->table(1), logits.data());
            m->pool->set_cached(1, int(head.size()), head);
            const int keep = kContextSinkTokens, n = (int(head.size()) - keep) / 2;
            Stopwatch shift_clock;
            shift_kv(*m->backend, *m->pool, 1, keep, n, m->checkpoint.config.rope());
            const double shift_ms = shift_clock.elapsed_ms();
            std::vector<int32_t> kept(head.begin(), head.begin() + keep);
            kept.insert(kept.end(), head.begin() + keep + n, head.end());
            const int from = int(kept.size());
            kept.insert(kept.end(), tail.begin(), tail.end());
            const double after_shift = mean_nll(*m, 1, kept, from - 1);
            m->pool->reserve(2, from);
            m->backend->forward(std::span<const int32_t>(kept.data(), size_t(from)), 0, m->pool->table(2), logits.data());
            m->pool->set_cached(2, from, kept);
            const double afresh = mean_nll(*m, 2, kept, from - 1);
            std::printf("shift of %d positions (keep %d, %d stay): %.1f ms; NLL of %d tokens after it %.6f, "
                        "afresh %.6f, difference %.2e\n",
                        n, keep, int(head.size()) - n, shift_ms, continuation, after_shift, afresh,
                        std::abs(after_shift - afresh));
        }

        // 3. Decode speed over several contexts' worth of tokens.
        if (windows > 0) {
            Engine e;
            check(e.load(load), "load");
            GenerateParams p;
            p.max_new_tokens = windows * context;
            p.sampling.seed = seed;
            p.shift_when_full = true;
            std::vector<double> at;
            Stopwatch clock;
            const GenerationResult r = e.generate(e.create_conversation(ChatFormat::Completion), "Once upon a time", p,
                                                  [&](const std::string&, const GenerationStats&) { at.push_back(clock.elapsed_ms()); });
            check(r.status, "decode");
            std::printf("decode %d tokens with %d shifts (%d prefilled again), tok/s per %d-token window:",
                        r.stats.generated_tokens, r.stats.context_shifts, r.stats.reprefilled_tokens, context);
            for (size_t w = 0; (w + 1) * size_t(context) <= at.size(); ++w) {
                const double begin = w == 0 ? at[0] : at[w * size_t(context) - 1];
                const double end = at[(w + 1) * size_t(context) - 1];
                std::printf(" %.1f", (w == 0 ? context - 1 : context) / ((end - begin) / 1000.0));
            }
            std::printf("%s\n", r.stop_reason == StopReason::MaxTokens ? "" : " (ended early)");
        }
        return 0;
    } catch (const EngineError& err) {
        std::fprintf(stderr, "llamadesk-shift-bench: %s\n", err.what());
        return 1;
    }
}
