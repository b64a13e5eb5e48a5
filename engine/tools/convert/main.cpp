// llamadesk-convert: any checkpoint LlamaDesk opens (GGUF, llama2.c, Meta, Hugging Face) written as
// one GGUF file, its vocabulary embedded, in a chosen weight type or mix. The built-in model is made
// this way from the Meta folder its trainer writes (resources/guide-model/).
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "core/error.h"
#include "synthetic/synthetic_model.h"
#include "synthetic/widen.h"
#include "tokenizer/tokenizer.h"
#include "../tool_options.h"

using namespace llamadesk;

namespace {

const char* usage() {
    return "usage: llamadesk-convert --model PATH --out FILE.gguf [options]\n"
           "\n"
           "  --model PATH           checkpoint file or folder (GGUF, llama2.c .bin, Meta, Hugging Face)\n"
           "  --tokenizer PATH       its tokenizer.model (default: the checkpoint's own or the one beside it)\n"
           "  --dtype T              weight type or mix of the matrices (default f16; norms stay f32)\n"
           "  --name TEXT            general.name\n"
           "  --chat-template FILE   tokenizer.chat_template: a Jinja file for the Llama 2 chat format\n";
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) fail(ErrorCode::FileNotFound, "cannot open " + path);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

int main(int argc, char** argv) {
    try {
        std::string model, tokenizer, out, name, chat_template;
        WeightMix mix = DType::F16;
        const bool run = tools::read_options(argc, argv, usage(), [&](const std::string& arg, const std::string& value) {
            if (arg == "--model") model = value;
            else if (arg == "--tokenizer") tokenizer = value;
            else if (arg == "--out") out = value;
            else if (arg == "--name") name = value;
            else if (arg == "--chat-template") chat_template = read_file(value);
            else if (arg == "--dtype") mix = tools::parse_mix(value);
            else return false;
            return true;
        });
        if (!run) return 0;
        if (model.empty() || out.empty()) fail(ErrorCode::InvalidArgument, "--model and --out are needed (see --help)");

        Checkpoint ckpt = open_checkpoint(model, tokenizer);
        validate_weights(ckpt);
        // A GGUF file carries its vocabulary: a tokenizer.model beside the weights goes inside.
        if (!ckpt.tokenizer.embedded)
            ckpt.tokenizer.embedded =
                std::make_shared<EmbeddedVocab>(Tokenizer::from_source(ckpt.tokenizer)->vocabulary());
        if (!name.empty()) ckpt.name = name;
        if (!chat_template.empty()) ckpt.chat_template = chat_template;
        const Checkpoint stored = store_in_mix(ckpt, mix);
        write_gguf(stored, out);
        std::fprintf(stderr, "wrote %s: %s, %.1f MB, %d layers, dim %d, %d heads / %d kv heads, vocabulary %d\n",
                     out.c_str(), stored.describe_weight_types().c_str(), double(stored.weight_bytes()) / 1e6,
                     stored.config.n_layers, stored.config.dim, stored.config.n_heads, stored.config.n_kv_heads,
                     stored.config.vocab_size);
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "llamadesk-convert: %s\n", e.what());
        return 1;
    }
}
