// llamadesk-widen: writes a model widened to K-quant shapes (widen_checkpoint: same function, rows
// of new_dim and new_hidden elements) as GGUF, in F32 or re-stored in a mix by our reference
// quantizers, so llama.cpp's quantizer and both programs' perplexity can run on a real small model
// (see engine/tools/bench/compare_quantized_perplexity.py).
#include <cstdio>
#include <string>

#include "core/error.h"
#include "synthetic/synthetic_model.h"
#include "synthetic/widen.h"
#include "../tool_options.h"

using namespace llamadesk;

namespace {

const char* usage() {
    return "usage: llamadesk-widen --model PATH --dim D --hidden H --out FILE.gguf [--dtype T]\n"
           "\n"
           "  --model PATH   checkpoint file or folder (a GGUF with its vocabulary, for llama.cpp)\n"
           "  --dim D        new width: whole heads of the model's head_dim, a multiple of 256 for K-quants\n"
           "  --hidden H     new feed-forward width\n"
           "  --dtype T      store the matrices in T by LlamaDesk's reference quantizers (default f32)\n";
}

using tools::parse_int;

}  // namespace

int main(int argc, char** argv) {
    try {
        std::string model, out;
        int dim = 0, hidden = 0;
        WeightMix mix = DType::F32;
        const bool run = tools::read_options(argc, argv, usage(), [&](const std::string& arg, const std::string& value) {
            if (arg == "--model") model = value;
            else if (arg == "--out") out = value;
            else if (arg == "--dim") dim = parse_int(arg, value);
            else if (arg == "--hidden") hidden = parse_int(arg, value);
            else if (arg == "--dtype") mix = tools::parse_mix(value);
            else return false;
            return true;
        });
        if (!run) return 0;
        if (model.empty() || out.empty() || dim <= 0 || hidden <= 0)
            fail(ErrorCode::InvalidArgument, "--model, --dim, --hidden and --out are all needed (see --help)");
        const Checkpoint wide = widen_checkpoint(open_checkpoint(model), dim, hidden);
        const Checkpoint stored = mix.base == DType::F32 && !mix.medium ? wide : store_in_mix(wide, mix);
        write_gguf(stored, out);
        std::fprintf(stderr, "wrote %s: dim %d, hidden %d, %d heads, %d kv heads, %s\n", out.c_str(), stored.config.dim,
                     stored.config.hidden_dim, stored.config.n_heads, stored.config.n_kv_heads,
                     stored.describe_weight_types().c_str());
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "llamadesk-widen: %s\n", e.what());
        return 1;
    }
}
