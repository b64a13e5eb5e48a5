// llamadesk-cli: completion, interactive chat, tokenization and the perplexity score from the
// terminal; completion and chat also with a server (--remote, remote_mode.cpp). stdout carries only
// results (the prompt and what the model writes, token ids, or the score); everything else, errors,
// progress and --stats figures included, goes to stderr.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include "chat/chat_template.h"
#include "cli_options.h"
#include "print_prompt.h"
#include "interrupt.h"
#include "library_mode.h"
#include "remote_mode.h"
#include "core/error.h"
#include "core/exception_status.h"
#include "readers/tokenizer_locator.h"
#include "tokenizer/tokenizer.h"

using namespace llamadesk;

namespace {

void check(const Status& s) {
    if (!s.ok()) throw EngineError(s.code, s.message);
}

void print_stats(const Engine& engine, const GenerationResult& r) {
    const GenerationStats& s = r.stats;
    const PoolStats pool = engine.pool_stats();
    std::fprintf(stderr,
                 "\n[stats] stop: %s | prompt %d tokens, prefilled %d (%d again after eviction) in %.1f ms, "
                 "%.1f tok/s | first token after %.1f ms | generated %d tokens, decode %.1f tok/s\n"
                 "[stats] conversation: %d tokens, %d cached in %d blocks, context %d | pool: %d / %d blocks "
                 "of %d tokens, %.2f / %.2f MiB, %lld evictions\n",
                 stop_reason_name(r.stop_reason), s.prompt_tokens, s.prefilled_tokens, s.reprefilled_tokens,
                 s.prefill_ms, s.prefill_tokens_per_s, s.time_to_first_token_ms, s.generated_tokens,
                 s.decode_tokens_per_s, s.conversation.history_tokens, s.conversation.cached_tokens,
                 s.conversation.cache_blocks, s.conversation.context_length, pool.blocks_used, pool.blocks_total,
                 pool.block_size, pool.bytes_used / 1048576.0, pool.bytes_total / 1048576.0,
                 static_cast<long long>(pool.evictions));
    std::fprintf(stderr, "context shifts: %d, tokens re-prefilled: %d\n", s.context_shifts, s.reprefilled_tokens);
}

GenerationResult stream(Engine& engine, ConversationId id, const std::string& text, const cli::Options& o) {
    cli::InterruptGuard guard;
    GenerationResult r = engine.generate(
        id, text, o.generate,
        [](const std::string& piece, const GenerationStats&) {
            std::fwrite(piece.data(), 1, piece.size(), stdout);
            std::fflush(stdout);
        },
        cli::InterruptGuard::flag());
    check(r.status);
    return r;
}

// A line of /proc/self/status in MB ("VmRSS": resident now, "VmHWM": the peak), or -1.
double status_megabytes(const char* field) {
    std::FILE* status = std::fopen("/proc/self/status", "r");
    if (status == nullptr) return -1;
    char line[256];
    double kb = -1;
    const size_t n = std::strlen(field);
    while (std::fgets(line, sizeof line, status))
        if (std::strncmp(line, field, n) == 0 && line[n] == ':') kb = std::atof(line + n + 1);
    std::fclose(status);
    return kb < 0 ? -1 : kb * 1024 / 1e6;
}

void load(Engine& engine, const cli::Options& o) {
    check(engine.load(o.load));
    const ModelInfo info = engine.model_info();
    std::fprintf(stderr,
                 "[llamadesk] %s: %s (%.1f MB, %.2f bytes/param; %.0f MB resident after load, peak %.0f MB), %d layers, "
                 "%d heads / %d kv heads, context %d: %s; %s on %s (%s)\n",
                 info.name.c_str(), info.weight_types.c_str(), double(info.weight_bytes) / 1e6,
                 double(info.weight_bytes) / double(info.n_params), status_megabytes("VmRSS"), status_megabytes("VmHWM"),
                 info.n_layers, info.n_heads, info.n_kv_heads,
                 info.context_length, info.context_reason.c_str(), info.format.c_str(), info.backend.c_str(),
                 info.device.c_str());
}

void run_tokenize(const cli::Options& o) {
    std::vector<int> ids;
    if (!o.load.model_path.empty()) {
        Engine engine;
        check(engine.load(o.load));
        check(engine.tokenize(o.text, true, &ids));
    } else {
        ids = Tokenizer::from_source(tokenizer_from_path(o.load.tokenizer_path))->encode(o.text, true);
    }
    for (size_t i = 0; i < ids.size(); ++i) std::printf(i ? " %d" : "%d", ids[i]);
    std::printf("\n");
}

std::string read_text_file(const std::string& path) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) fail(ErrorCode::FileNotFound, "cannot open '" + path + "': " + std::strerror(errno));
    std::string text;
    char buffer[1 << 16];
    size_t n = 0;
    while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0) text.append(buffer, n);
    const int error = std::ferror(f) ? errno : 0;
    std::fclose(f);
    if (error) fail(ErrorCode::InvalidArgument, "cannot read '" + path + "': " + std::strerror(error));
    return text;
}

void run_perplexity(const cli::Options& o) {
    const std::string text = read_text_file(o.text);  // before loading, so a bad file fails fast
    if (text.empty()) fail(ErrorCode::InvalidArgument, "'" + o.text + "' is empty; there is no text to score");
    Engine engine;
    load(engine, o);
    // A running count only on a terminal, so a redirected stderr stays a clean log.
    const bool on_terminal = isatty(fileno(stderr));
    PerplexityProgress progress;
    if (on_terminal)
        progress = [](int scored, int total) { std::fprintf(stderr, "\r[llamadesk] scored %d / %d tokens", scored, total); };
    PerplexityResult r;
    check(engine.perplexity(text, &r, progress));
    if (on_terminal) std::fputc('\n', stderr);
    const int context = engine.model_info().context_length;
    if (o.json)
        std::printf("{\"tokens\": %d, \"windows\": %d, \"context\": %d, \"mean_nll\": %.17g, \"perplexity\": %.17g}\n",
                    r.tokens, r.windows, context, r.mean_nll, r.perplexity);
    else
        std::printf("perplexity %.3f (mean NLL %.4f over %d tokens, %d window%s of %d)\n", r.perplexity, r.mean_nll,
                    r.tokens, r.windows, r.windows == 1 ? "" : "s", context);
}

void run_prompt(const cli::Options& o) {
    Engine engine;
    load(engine, o);
    const ConversationId id = engine.create_conversation(ChatFormat::Completion);
    std::fwrite(o.text.data(), 1, o.text.size(), stdout);
    const GenerationResult r = stream(engine, id, o.text, o);
    std::fputc('\n', stderr);  // ends the line on a terminal; stdout stays exactly prompt + text
    if (o.stats) print_stats(engine, r);
}

void run_chat(const cli::Options& o) {
    Engine engine;
    load(engine, o);
    // The checkpoint's own chat format; a model made for completion is still asked in Llama 2's.
    const ModelInfo info = engine.model_info();
    ChatFormat format = info.chat_format;
    std::string why = info.chat_format_reason;
    if (format == ChatFormat::Completion) {
        format = ChatFormat::Llama2Chat;
        why = "a completion model, asked in Llama 2's format";
    }
    ConversationId id = engine.create_conversation(format);
    std::fprintf(stderr, "[llamadesk] chat (%s; %s): type a message; /new starts over, /quit ends\n",
                 chat_format_name(format).c_str(), why.c_str());
    std::string line;
    for (;;) {
        std::fprintf(stderr, "> ");
        if (!std::getline(std::cin, line) || line == "/quit") break;
        if (line == "/new") {
            check(engine.reset_conversation(id));
            std::fprintf(stderr, "[llamadesk] new conversation\n");
            continue;
        }
        if (line.empty()) continue;
        const GenerationResult r = stream(engine, id, line, o);
        std::printf("\n");
        std::fflush(stdout);
        if (r.stop_reason == StopReason::ContextFull)
            std::fprintf(stderr, "[llamadesk] the context is full; /new starts over\n");
        if (o.stats) print_stats(engine, r);
    }
}

}  // namespace

int main(int argc, char** argv) {
    try {
        const cli::Options o = cli::parse_options(argc, argv);
        if (o.help) {
            std::fputs(cli::usage(), stdout);
            return 0;
        }
        if (!o.remote.url.empty()) return cli::run_remote(o, argc, argv);
        if (o.mode == cli::Mode::ListModels) return cli::run_list_models(o, argc, argv);
        if (o.mode == cli::Mode::Download) return cli::run_download(o, argc, argv);
        switch (o.mode) {
        case cli::Mode::Tokenize: run_tokenize(o); break;
        case cli::Mode::Prompt: run_prompt(o); break;
        case cli::Mode::Chat: run_chat(o); break;
        case cli::Mode::Perplexity: run_perplexity(o); break;
        case cli::Mode::PrintPrompt: cli::run_print_prompt(o); break;
        case cli::Mode::ListModels:
        case cli::Mode::Download: break;  // answered above
        }
        return 0;
    } catch (...) {
        const Status s = status_from_current_exception();
        std::fflush(stdout);
        std::fprintf(stderr, "llamadesk-cli: error: %s\n", s.message.c_str());
        return 1;
    }
}
