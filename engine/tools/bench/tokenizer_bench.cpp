// llamadesk-tokenizer-bench: how fast a vocabulary encodes text, on one thread. Prints, for a text
// file, its bytes, its tokens and MB/s (best of several runs), then the seconds for the inputs a
// quadratic pre-tokenizer or merge loop would choke on: 1 MB of spaces, of one letter, of one
// digit, and of "a " repeated. compare_tiktoken.py runs tiktoken on the same text in the same run.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "bench_clock.h"
#include "core/error.h"
#include "readers/tokenizer_locator.h"
#include "tokenizer/tokenizer.h"
#include "../tool_options.h"

using namespace llamadesk;

namespace {

const char* usage() {
    return "usage: llamadesk-tokenizer-bench --tokenizer PATH [--text FILE] [--runs N]\n"
           "  PATH: a GGUF vocabulary, tokenizer.json, or a SentencePiece / tiktoken tokenizer.model\n"
           "  defaults: no text file (only the 1 MB pathological inputs), best of 5 runs\n";
}

struct Timing {
    double seconds = 1e30;
    size_t tokens = 0;
};

Timing best_of(const Tokenizer& tok, const std::string& text, int runs) {
    Timing t;
    for (int r = 0; r < runs; ++r) {
        const double start = bench::now_seconds(false);
        t.tokens = tok.encode(text, false).size();
        t.seconds = std::min(t.seconds, bench::now_seconds(false) - start);
    }
    return t;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        std::string tokenizer, text_file;
        int runs = 5;
        if (!tools::read_options(argc, argv, usage(), [&](const std::string& arg, const std::string& value) {
                if (arg == "--tokenizer") tokenizer = value;
                else if (arg == "--text") text_file = value;
                else if (arg == "--runs") runs = tools::parse_int(arg, value);
                else return false;
                return true;
            }))
            return 0;
        if (tokenizer.empty() || runs < 1) fail(ErrorCode::InvalidArgument, "--tokenizer is required and --runs positive (see --help)");
        const auto tok = Tokenizer::from_source(tokenizer_from_path(tokenizer));
        std::printf("tokenizer: %s, %d tokens\n", tok->kind().c_str(), tok->vocab_size());
        if (!text_file.empty()) {
            std::ifstream in(text_file, std::ios::binary);
            if (!in) fail(ErrorCode::FileNotFound, "cannot open " + text_file);
            const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
            const Timing t = best_of(*tok, text, runs);
            std::printf("text: %zu bytes, %zu tokens, %.5f s, %.2f MB/s\n", text.size(), t.tokens, t.seconds,
                        double(text.size()) / 1e6 / t.seconds);
        }
        const size_t n = 1 << 20;
        std::string pairs;
        while (pairs.size() < n) pairs += "a ";
        for (const auto& [name, text] : {std::pair<const char*, std::string>{"spaces", std::string(n, ' ')},
                                         {"one letter", std::string(n, 'a')},
                                         {"one digit", std::string(n, '7')},
                                         {"\"a \" repeated", pairs}}) {
            const Timing t = best_of(*tok, text, 1);
            std::printf("1 MB of %s: %zu tokens, %.3f s\n", name, t.tokens, t.seconds);
        }
        return 0;
    } catch (const EngineError& e) {
        std::fprintf(stderr, "llamadesk-tokenizer-bench: %s\n", e.what());
        return 1;
    }
}
