#include "cli_options.h"

#include <charconv>
#include <cstdlib>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"
#include "llamadesk/builtin_model.h"
#include "../tool_options.h"

namespace llamadesk::cli {

namespace {

template <class T>
T parse_number(const std::string& option, const std::string& value) {
    T out{};
    const char* end = value.data() + value.size();
    auto [ptr, ec] = std::from_chars(value.data(), end, out);
    if (ec != std::errc() || ptr != end || value.empty())
        fail(ErrorCode::InvalidArgument, option + " expects a number, not '" + value + "'");
    return out;
}

BackendKind parse_backend(const std::string& value) {
    if (value == "cpu") return BackendKind::Cpu;
    if (value == "cuda") return BackendKind::Cuda;
    if (value == "auto") return BackendKind::Auto;
    fail(ErrorCode::InvalidArgument, "--backend expects cpu, cuda or auto, not '" + value + "'");
}

}  // namespace

const char* usage() {
    return "usage: llamadesk-cli [--model PATH] [options] (--prompt TEXT | --chat)\n"
           "       llamadesk-cli (--model PATH | --tokenizer PATH) --tokenize TEXT\n"
           "       llamadesk-cli [--model PATH] --perplexity FILE [--json]\n"
           "       llamadesk-cli [--model PATH] [--chat-template FILE.jinja|FAMILY] --messages FILE.json --print-prompt\n"
           "       llamadesk-cli --remote URL [--api-key-file FILE] [--model NAME] [options] (--prompt TEXT | --chat)\n"
           "       llamadesk-cli --list-models\n"
           "       llamadesk-cli --download REPO FILE\n"
           "\n"
           "  --model PATH          checkpoint file (.gguf, .bin) or a Meta / Hugging Face folder\n"
           "                        (default: the built-in model, LlamaDesk Guide)\n"
           "  --tokenizer PATH      SentencePiece tokenizer.model or a GGUF vocabulary (default: the model's own, or one beside it)\n"
           "  --prompt TEXT         complete TEXT; stdout gets TEXT followed by the generated text\n"
           "  --chat                interactive chat in the model's format (default; Llama 2 chat for a\n"
           "                        completion model); /new starts over, /quit or EOF ends\n"
           "  --print-prompt        print the exact prompt the chat format makes of --messages (a JSON\n"
           "                        list of {\"role\": \"system\"|\"user\"|\"assistant\", \"content\": ...}),\n"
           "                        special tokens as text, the answer's header appended, then exit\n"
           "  --chat-template T     the chat format: a Jinja template file (its family is detected) or a\n"
           "                        family: llama3.1, llama3, chat (Llama 2), mistral, chatml, zephyr,\n"
           "                        deepseek-r1, completion (default: the model's)\n"
           "  --date D              Llama 3.1's \"Today Date\", e.g. \"26 Jul 2024\" (default: today)\n"
           "  --list-models         list the checkpoints already on this computer (LlamaDesk's models\n"
           "                        folder, the Hugging Face cache, LM Studio, GPT4All, Ollama), and\n"
           "                        why any would not open\n"
           "  --download REPO FILE  download FILE of the Hugging Face Hub repository REPO into the Hugging\n"
           "                        Face cache, resuming a partial download, and check its sha256; prints\n"
           "                        the file's path. $HF_ENDPOINT and $HF_TOKEN as huggingface_hub reads them\n"
           "  --tokenize TEXT       print the token ids the model sees for TEXT (BOS first)\n"
           "  --perplexity FILE     score FILE's text: mean negative log-likelihood of every token after BOS\n"
           "                        and its exp; text longer than the context goes in windows of the\n"
           "                        context length, each starting with BOS\n"
           "  --json                with --perplexity: print one JSON object (tokens, windows, context,\n"
           "                        mean_nll, perplexity)\n"
           "  -n N                  at most N new tokens (default 256; <= 0: until EOS or context full)\n"
           "  --temperature F       0 is greedy (default 0.8)\n"
           "  --top-k N             (default 40; 0 off)\n"
           "  --top-p F             (default 0.95; 1 off)\n"
           "  --min-p F             (default 0.05; 0 off)\n"
           "  --repeat-penalty F    over the last 64 tokens (default 1, off)\n"
           "  --seed N              seed of the sampler (default: random)\n"
           "  --threads N           CPU threads (default: one per physical core)\n"
           "  -c, --ctx-size N      at most N tokens in a conversation, and no more than the model's (default:\n"
           "                        the model's, or less where its KV cache would take over a quarter of free memory)\n"
           "  --context-full W     when the context is full: stop (default) ends the answer; shift drops the\n"
           "                        older half of the history after its first 4 tokens, keeping the rest's\n"
           "                        cache (a context shift), and goes on\n"
           "  --kv-type T           the KV cache's element type: f16 (default), f32 (exact, twice the memory)\n"
           "                        or q8_0 (about half of f16; CPU only)\n"
           "  --backend B           cpu, cuda or auto (default auto: CUDA when a GPU is usable;\n"
           "                        without one, cuda runs on the CPU and the header line says why)\n"
           "  --stats               print prefill / decode figures and cache occupancy to stderr\n"
           "                        (with --remote: what was measured as the answer arrived and what the\n"
           "                        server reported)\n"
           "  --remote URL          use a server speaking the OpenAI-compatible API (vLLM, llama.cpp's\n"
           "                        server), e.g. http://127.0.0.1:8000/v1; --model then names one of its\n"
           "                        models (default: its only one); --prompt uses /v1/completions, --chat\n"
           "                        /v1/chat/completions with the whole history\n"
           "  --api-key-file FILE   with --remote: the API key, read from FILE, sent to URL only\n"
           "  --timeout S           with --remote: fail when the server sends nothing for S seconds (default 60)\n"
           "  -h, --help            this text\n";
}

Options parse_options(int argc, char** argv) {
    Options o;
    o.generate.max_new_tokens = 256;
    bool have_mode = false;
    auto set_mode = [&](Mode m, const std::string& option) {
        if (have_mode)
            fail(ErrorCode::InvalidArgument,
                 "choose one of --prompt, --chat, --tokenize, --perplexity, --print-prompt, --list-models and "
                 "--download (" + option + ")");
        have_mode = true;
        o.mode = m;
    };

    const std::vector<std::string> args(argv + 1, argv + argc);
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        auto value = [&]() -> const std::string& {
            if (i + 1 >= args.size()) fail(ErrorCode::InvalidArgument, a + " needs a value");
            return args[++i];
        };
        if (a == "-h" || a == "--help") o.help = true;
        else if (a == "--model") o.load.model_path = value();
        else if (a == "--tokenizer") o.load.tokenizer_path = value();
        else if (a == "--prompt") { set_mode(Mode::Prompt, a); o.text = value(); }
        else if (a == "--chat") set_mode(Mode::Chat, a);
        else if (a == "--tokenize") { set_mode(Mode::Tokenize, a); o.text = value(); }
        else if (a == "--perplexity") { set_mode(Mode::Perplexity, a); o.text = value(); }
        else if (a == "--json") o.json = true;
        else if (a == "--print-prompt") set_mode(Mode::PrintPrompt, a);
        else if (a == "--list-models") set_mode(Mode::ListModels, a);
        else if (a == "--download") {
            set_mode(Mode::Download, a);
            o.download_repo = value();
            o.download_file = value();
        }
        else if (a == "--messages") o.messages_file = value();
        else if (a == "--chat-template") o.chat_template = value();
        else if (a == "--date") o.date = value();
        else if (a == "-n") o.generate.max_new_tokens = parse_number<int>(a, value());
        else if (a == "--temperature") o.generate.sampling.temperature = parse_number<float>(a, value());
        else if (a == "--top-k") o.generate.sampling.top_k = parse_number<int>(a, value());
        else if (a == "--top-p") o.generate.sampling.top_p = parse_number<float>(a, value());
        else if (a == "--min-p") o.generate.sampling.min_p = parse_number<float>(a, value());
        else if (a == "--repeat-penalty") o.generate.sampling.repeat_penalty = parse_number<float>(a, value());
        else if (a == "--seed") o.generate.sampling.seed = parse_number<int64_t>(a, value());
        else if (a == "--kv-type") o.load.kv_cache_type = tools::parse_kv_type(a, value());
        else if (a == "-c" || a == "--ctx-size") o.load.context_length = parse_number<int>(a, value());
        else if (a == "--threads") o.load.n_threads = parse_number<int>(a, value());
        else if (a == "--backend") o.load.backend = parse_backend(value());
        else if (a == "--stats") o.stats = true;
        else if (a == "--context-full") {
            const std::string w = value();
            if (w != "shift" && w != "stop")
                fail(ErrorCode::InvalidArgument, "--context-full takes shift or stop, not '" + w + "'");
            o.generate.shift_when_full = w == "shift";
        }
        else if (a == "--remote") o.remote.url = value();
        else if (a == "--api-key-file") o.remote.api_key_file = value();
        else if (a == "--timeout") o.remote.timeout_s = parse_number<int>(a, value());
        else fail(ErrorCode::InvalidArgument, "unknown option '" + a + "' (see --help)");
    }
    if (o.help) return o;
    if (!o.remote.url.empty()) {
        if (o.mode != Mode::Prompt && o.mode != Mode::Chat)
            fail(ErrorCode::InvalidArgument, "--remote goes with --prompt or --chat");
        o.remote.model = std::exchange(o.load.model_path, std::string());
        if (o.remote.timeout_s < 1) fail(ErrorCode::InvalidArgument, "--timeout must be at least 1 second");
    } else if (!o.remote.api_key_file.empty()) {
        fail(ErrorCode::InvalidArgument, "--api-key-file goes with --remote");
    }
    if (o.mode == Mode::ListModels || o.mode == Mode::Download) {
        if (!o.remote.url.empty() || !o.load.model_path.empty())
            fail(ErrorCode::InvalidArgument, "--list-models and --download go without --model and --remote");
        return o;
    }
    // Without --model: the built-in model (a bare --tokenizer is enough for --tokenize).
    if (o.remote.url.empty() && o.load.model_path.empty() &&
        !(o.mode == Mode::Tokenize && !o.load.tokenizer_path.empty())) {
        o.load.model_path = builtin_model_path();
        if (o.load.model_path.empty())
            fail(ErrorCode::InvalidArgument,
                 std::string("no --model given, and the built-in model ") + kBuiltinModelFile +
                     " is neither next to llamadesk-cli nor in its prefix's share/llamadesk/ "
                     "(LLAMADESK_BUILTIN_MODEL names it elsewhere)");
    }
    if (o.json && o.mode != Mode::Perplexity) fail(ErrorCode::InvalidArgument, "--json goes with --perplexity");
    if ((o.mode == Mode::PrintPrompt) != !o.messages_file.empty())
        fail(ErrorCode::InvalidArgument, "--print-prompt and --messages FILE go together");
    if (const Status s = validate_sampling(o.generate.sampling); !s.ok()) fail(s.code, s.message);
    if (o.load.n_threads < 0) fail(ErrorCode::InvalidArgument, "--threads cannot be negative");
    return o;
}

}  // namespace llamadesk::cli
