// llamadesk-snapshot-bench: what a KV snapshot saves after a restart. A conversation is grown to
// about --history tokens and saved, and a follow-up is timed; then a new Engine (the restart) is given the same turns as text
// and a one-line follow-up, once with the snapshot folder and once without, and the time to the
// first token of each is printed with the bytes on disk. Only the public Engine API is used, as the
// app uses it. The restart is in the same process, so the snapshot files are read from the
// operating system's file cache, as they are right after the app wrote them.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "cache/snapshot_store.h"
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
    return "usage: llamadesk-snapshot-bench --model PATH [options]\n"
           "\n"
           "  --history N   tokens of conversation before the restart (default 1000)\n"
           "  --threads N   CPU threads (default: one per physical core)\n"
           "  --kv-type T   f16 (default), f32 or q8_0\n"
           "  --repeats N   restarts timed each way; the median is printed (default 5)\n"
           "  --folder DIR  where the snapshot goes (default: a new folder under /tmp, removed after)\n";
}

// A paragraph of ordinary prose, about 100 tokens for a Llama tokenizer.
const char* kParagraph =
    "The cache keeps the keys and values of every position, so a follow-up only runs its own tokens "
    "through the model. When a person comes back to a long conversation the next day, the history "
    "would have to be computed again from the first word, unless the blocks were kept on disk. ";

struct Restart {
    double ttft_ms = 0;
    int restored = 0, prefilled = 0;
};

}  // namespace

int main(int argc, char** argv) {
    try {
        LoadParams load;
        load.backend = BackendKind::Cpu;
        int history = 1000, repeats = 5;
        std::string folder;
        const bool run = tools::read_options(argc, argv, usage(), [&](const std::string& arg, const std::string& value) {
            if (arg == "--model") load.model_path = value;
            else if (arg == "--history") history = tools::parse_int(arg, value);
            else if (arg == "--threads") load.n_threads = tools::parse_int(arg, value);
            else if (arg == "--kv-type") load.kv_cache_type = tools::parse_kv_type(arg, value);
            else if (arg == "--repeats") repeats = std::max(1, tools::parse_int(arg, value));
            else if (arg == "--folder") folder = value;
            else return false;
            return true;
        });
        if (!run) return 0;
        if (load.model_path.empty()) fail(ErrorCode::InvalidArgument, "--model is needed (see --help)");
        const bool own_folder = folder.empty();
        if (own_folder) folder = (std::filesystem::temp_directory_path() / "llamadesk-snapshot-bench").string();
        std::filesystem::remove_all(folder);
        SnapshotSettings snapshots;
        snapshots.folder = folder;
        snapshots.budget_bytes = int64_t(1) << 40;

        // The conversation before the restart: turns of prose with short answers.
        std::vector<ChatTurn> turns;
        GenerateParams params;
        params.max_new_tokens = 16;
        params.sampling.seed = 1;
        double save_ms = 0, ttft_before = 0;
        int history_tokens = 0;
        {
            Engine e;
            check(e.load(load), "load");
            check(e.set_snapshots(snapshots), "snapshots");
            const ConversationId c = e.create_conversation(e.model_info().chat_format);
            ConversationStats s;
            TurnSize next;
            do {
                const GenerationResult r = e.generate(c, kParagraph, params);
                check(r.status, "generate");
                turns.push_back({kParagraph, r.text});
                check(e.conversation_stats(c, &s), "stats");
                check(e.measure_turn(c, kParagraph, "", &next), "measure");
                // room left for another turn, its answer and the follow-up
            } while (s.history_tokens < history &&
                     next.history_tokens + next.message_tokens + 2 * params.max_new_tokens < next.context_length);
            history_tokens = s.history_tokens;
            const Stopwatch clock;
            check(e.save_snapshot(c), "save");
            save_ms = clock.elapsed_ms();
            GenerateParams one = params;
            one.max_new_tokens = 1;
            const GenerationResult r = e.generate(c, "And then?", one);
            check(r.status, "follow-up");
            ttft_before = r.stats.time_to_first_token_ms;
        }

        auto restart = [&](bool with_snapshot) {
            Engine e;
            check(e.load(load), "load");
            if (with_snapshot) check(e.set_snapshots(snapshots), "snapshots");
            const ConversationId c = e.create_conversation(e.model_info().chat_format);
            check(e.restore_turns(c, turns, ""), "restore");
            GenerateParams one = params;
            one.max_new_tokens = 1;
            const GenerationResult r = e.generate(c, "And then?", one);
            check(r.status, "follow-up");
            return Restart{r.stats.time_to_first_token_ms, r.stats.restored_tokens, r.stats.prefilled_tokens};
        };
        std::vector<double> with, without;
        Restart last_with, last_without;
        for (int i = 0; i < repeats; ++i) {
            last_with = restart(true);
            with.push_back(last_with.ttft_ms);
            last_without = restart(false);
            without.push_back(last_without.ttft_ms);
        }
        const int64_t bytes = SnapshotStore::bytes_on_disk(folder);
        std::printf("model          %s (%s cache)\n", load.model_path.c_str(), kv_cache_type_name(load.kv_cache_type));
        std::printf("history        %d tokens in %zu turns; saved in %.1f ms, %.1f MB on disk\n", history_tokens,
                    turns.size(), save_ms, double(bytes) / 1e6);
        std::printf("follow-up before the restart, time to first token: %.1f ms\n", ttft_before);
        std::printf("follow-up after a restart, time to first token (median of %d):\n", repeats);
        std::printf("  with the snapshot     %8.1f ms  (%d tokens read from disk, %d prefilled)\n", median(with),
                    last_with.restored, last_with.prefilled);
        std::printf("  without               %8.1f ms  (%d prefilled)\n", median(without), last_without.prefilled);
        std::printf("  ratio                 %8.1fx\n", median(without) / median(with));
        if (own_folder) std::filesystem::remove_all(folder);
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "llamadesk-snapshot-bench: %s\n", e.what());
        return 1;
    }
}
