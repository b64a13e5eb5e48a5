// Command line of llamadesk-cli.
#pragma once

#include <optional>
#include <string>

#include "llamadesk/engine.h"

namespace llamadesk::cli {

enum class Mode { Prompt, Chat, Tokenize, Perplexity, PrintPrompt, ListModels, Download };

// A server speaking the OpenAI-compatible API, instead of a checkpoint (--remote).
struct RemoteOptions {
    std::string url;           // the server's base URL; empty: the local engine
    std::string api_key_file;  // a file holding the key (never the key on the command line)
    std::string model;         // --model: the server's model id; empty: its only one
    int timeout_s = 60;        // --timeout: seconds the server may stay silent
};

struct Options {
    Mode mode = Mode::Chat;
    RemoteOptions remote;
    std::string text;  // --prompt or --tokenize text, or the --perplexity file's path
    LoadParams load;
    GenerateParams generate;
    bool stats = false;
    bool json = false;  // --perplexity: one JSON object on stdout
    std::string messages_file;  // --print-prompt: [{"role": ..., "content": ...}]
    std::string chat_template;  // --chat-template: a .jinja file or a family's key; empty: detected
    std::string date;           // --date: Llama 3.1's "Today Date"; empty: today
    std::string download_repo, download_file;  // --download REPO FILE (from the Hugging Face Hub)
    bool help = false;
};

// The usage text printed by --help.
const char* usage();

// Parses argv. Throws EngineError(InvalidArgument) with a one-line message on a bad command line.
Options parse_options(int argc, char** argv);

}  // namespace llamadesk::cli
