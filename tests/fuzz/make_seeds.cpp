// Writes a seed corpus for every fuzz target with the project's own writers: a small model (GQA,
// untied and tied) as GGUF, llama2.c, a Hugging Face folder and a Meta folder, whose files become
// the seeds of gguf, llama2c, safetensors, hf_config, torch_pth and meta_params; a byte-level BPE
// vocabulary as GGUF, tiktoken and tokenizer.json for gguf_vocab, tiktoken and hf_tokenizer.
// usage: fuzz_make_seeds OUT_DIR
#include <cstdio>
#include <filesystem>

#include "synthetic/synthetic_model.h"
#include "synthetic/synthetic_vocab.h"

namespace fs = std::filesystem;
using namespace llamadesk;

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
        return 2;
    }
    const fs::path out = argv[1];
    const ModelConfig c{16, 40, 2, 4, 2, 300, 32};
    for (const std::string t : {"gguf", "llama2c", "safetensors", "hf_config", "torch_pth", "meta_params",
                                "gguf_vocab", "tiktoken", "hf_tokenizer"})
        fs::create_directories(out / t);
    for (const bool tied : {true, false}) {
        const std::string suffix = tied ? "-tied" : "-untied";
        const Checkpoint f32 = make_synthetic_checkpoint(c, DType::F32, 1, tied);
        write_gguf(f32, (out / "gguf" / ("f32" + suffix + ".gguf")).string());
        write_gguf(make_synthetic_checkpoint(c, DType::BF16, 2, tied), (out / "gguf" / ("bf16" + suffix + ".gguf")).string());
        write_llama2c(f32, (out / "llama2c" / ("model" + suffix + ".bin")).string());
        const fs::path hf = out / ("hf" + suffix), meta = out / ("meta" + suffix);
        write_hf(f32, hf.string());
        write_meta(make_synthetic_checkpoint(c, DType::BF16, 3, tied), meta.string());
        fs::copy_file(hf / "model.safetensors", out / "safetensors" / ("model" + suffix + ".safetensors"));
        fs::copy_file(hf / "config.json", out / "hf_config" / ("config" + suffix + ".json"));
        fs::copy_file(meta / "consolidated.00.pth", out / "torch_pth" / ("consolidated" + suffix + ".pth"));
        fs::copy_file(meta / "params.json", out / "meta_params" / ("params" + suffix + ".json"));
        fs::remove_all(hf);
        fs::remove_all(meta);
    }
    const Checkpoint q = make_synthetic_checkpoint(ModelConfig{256, 256, 1, 4, 2, 40, 16}, WeightMix::parse("q4_k_m").value(), 4);
    write_gguf(q, (out / "gguf" / "q4_k_m.gguf").string());
    const EmbeddedVocab bpe = make_bpe_vocab({"a b", "ab c", "Ġ a", "Ġa b", "d o", "' t", "n 't"});
    Checkpoint llama3 = make_synthetic_checkpoint(ModelConfig{16, 40, 1, 4, 2, int(bpe.tokens.size()), 16}, DType::F32, 5);
    llama3.tokenizer.embedded = std::make_shared<EmbeddedVocab>(bpe);
    write_gguf(llama3, (out / "gguf_vocab" / "bpe.gguf").string());
    write_gguf(make_synthetic_checkpoint(c, DType::F32, 6), (out / "gguf_vocab" / "sentencepiece.gguf").string());
    write_tiktoken(bpe, (out / "tiktoken" / "tokenizer.model").string());
    const fs::path hf = out / "hf-bpe";
    fs::create_directories(hf);
    write_hf_tokenizer(bpe, hf.string());
    fs::copy_file(hf / "tokenizer.json", out / "hf_tokenizer" / "tokenizer.json");
    fs::remove_all(hf);
    std::printf("seeds written to %s\n", argv[1]);
    return 0;
}
