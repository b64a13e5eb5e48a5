// llamadesk-join-bench: how long an answer that is streaming pauses when another conversation's
// long prompt joins its batch (Engine::generate_batch with an admission). Conversation A answers;
// after a few of its tokens, B's prompt of about --prompt tokens joins. The batch prefills B a chunk
// per step, so A's longest gap between two tokens is about one chunk's prefill plus a decode step;
// prefilled whole, the gap would be B's whole prefill, which is printed beside it. Only the public
// Engine API is used.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/stopwatch.h"
#include "llamadesk/engine.h"
#include "../tool_options.h"
#include "engine_bench.h"

using namespace llamadesk;
using llamadesk::bench::check;
using llamadesk::bench::median;

namespace {

const char* usage() {
    return "usage: llamadesk-join-bench --model PATH [options]\n"
           "\n"
           "  --prompt N    tokens of the joining prompt, at least (default 900)\n"
           "  --threads N   CPU threads (default: one per physical core)\n"
           "  --repeats N   runs; the median of each figure is printed (default 5)\n";
}

const char* kSentence = "The cache keeps the keys and values of every position, so a follow-up is cheap. ";

}  // namespace

int main(int argc, char** argv) {
    try {
        LoadParams load;
        load.backend = BackendKind::Cpu;
        int prompt_tokens = 900, repeats = 5;
        const bool run = tools::read_options(argc, argv, usage(), [&](const std::string& arg, const std::string& value) {
            if (arg == "--model") load.model_path = value;
            else if (arg == "--prompt") prompt_tokens = tools::parse_int(arg, value);
            else if (arg == "--threads") load.n_threads = tools::parse_int(arg, value);
            else if (arg == "--repeats") repeats = std::max(1, tools::parse_int(arg, value));
            else return false;
            return true;
        });
        if (!run) return 0;
        if (load.model_path.empty()) fail(ErrorCode::InvalidArgument, "--model is needed (see --help)");
        Engine e;
        check(e.load(load), "load");
        GenerateParams greedy;
        greedy.sampling.temperature = 0.0f;

        std::vector<double> longest_gap, usual_gap, whole_prefill;
        int joined_tokens = 0;
        for (int r = 0; r < repeats; ++r) {
            const ConversationId a = e.create_conversation(ChatFormat::Completion);
            const ConversationId b = e.create_conversation(ChatFormat::Completion);
            std::string prompt;
            TurnSize size;
            do {
                prompt += kSentence;
                check(e.measure_turn(b, prompt, "", &size), "measure");
            } while (size.message_tokens < prompt_tokens && size.fits());
            joined_tokens = size.message_tokens;

            std::vector<double> a_times;  // ms at each of A's tokens
            const Stopwatch clock;
            GenerateParams a_params = greedy, b_params = greedy;
            a_params.max_new_tokens = 64;
            b_params.max_new_tokens = 1;
            size_t a_when_joined = 0;
            GenerationStats b_stats;
            BatchRequest first{a, "Once upon a time", a_params,
                               [&](const std::string&, const GenerationStats&) { a_times.push_back(clock.elapsed_ms()); },
                               nullptr, {}};
            BatchRequest second{b, prompt, b_params, {}, nullptr,
                                [&](const GenerationResult& result) { b_stats = result.stats; }};
            const std::vector<GenerationResult> results = e.generate_batch({first}, [&]() -> std::vector<BatchRequest> {
                if (a_times.size() < 8 || a_when_joined) return {};
                a_when_joined = a_times.size();
                return {second};
            });
            for (const GenerationResult& result : results) check(result.status, "generate");
            if (!a_when_joined || a_times.size() < a_when_joined + 4)
                fail(ErrorCode::Internal, "the first answer ended before the second prompt had joined");
            double longest = 0;
            std::vector<double> gaps;
            for (size_t i = 1; i < a_times.size(); ++i) {
                gaps.push_back(a_times[i] - a_times[i - 1]);
                if (i >= a_when_joined) longest = std::max(longest, gaps.back());
            }
            longest_gap.push_back(longest);
            usual_gap.push_back(median(std::vector<double>(gaps.begin(), gaps.begin() + long(a_when_joined) - 1)));
            whole_prefill.push_back(b_stats.prefill_ms);
            check(e.delete_conversation(a), "delete");
            check(e.delete_conversation(b), "delete");
        }
        const ModelInfo info = e.model_info();
        std::printf("model          %s (%d threads)\n", load.model_path.c_str(), info.n_threads);
        std::printf("a streaming answer while a %d-token prompt joins its batch (median of %d):\n", joined_tokens,
                    repeats);
        std::printf("  gap between its tokens before              %8.1f ms\n", median(usual_gap));
        std::printf("  longest gap while the prompt joins          %8.1f ms (chunks of the backend's size)\n",
                    median(longest_gap));
        std::printf("  the joining prompt's prefill, all chunks    %8.1f ms (the gap, were it prefilled whole)\n",
                    median(whole_prefill));
        return 0;
    } catch (const std::exception& ex) {
        std::fprintf(stderr, "llamadesk-join-bench: %s\n", ex.what());
        return 1;
    }
}
