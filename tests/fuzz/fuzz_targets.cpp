#include "fuzz_targets.h"

#include <unistd.h>

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "model/checkpoint.h"
#include "readers/gguf_reader.h"
#include "readers/hf_config.h"
#include "readers/hf_tokenizer.h"
#include "readers/mapped_file.h"
#include "readers/meta_reader.h"
#include "readers/safetensors_file.h"
#include "readers/torch_pickle.h"
#include "readers/zip_archive.h"
#include "tokenizer/tiktoken_model.h"
#include "tokenizer/tokenizer.h"

namespace llamadesk::fuzz {

namespace {

// The readers of whole files take a path: the input goes to a file of this process first.
std::string as_file(const uint8_t* data, size_t size, const char* extension) {
    const char* dir = std::getenv("TMPDIR");
    const std::string path = std::string(dir && *dir ? dir : "/tmp") + "/llamadesk-fuzz-" + std::to_string(getpid()) + extension;
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr) return {};
    std::fwrite(data, 1, size, f);
    std::fclose(f);
    return path;
}

template <class F>
void expecting_engine_errors(F&& f) {
    try {
        f();
    } catch (const EngineError&) {
    }
}

void checkpoint_file(const uint8_t* data, size_t size, const char* extension) {
    const std::string path = as_file(data, size, extension);
    if (path.empty()) return;
    expecting_engine_errors([&] { validate_weights(open_checkpoint(path, "/dev/null/no-tokenizer")); });
    std::remove(path.c_str());
}

void gguf(const uint8_t* data, size_t size) { checkpoint_file(data, size, ".gguf"); }
void llama2c(const uint8_t* data, size_t size) { checkpoint_file(data, size, ".bin"); }

void safetensors(const uint8_t* data, size_t size) {
    const std::string path = as_file(data, size, ".safetensors");
    if (path.empty()) return;
    expecting_engine_errors([&] { read_safetensors(std::make_shared<const MappedFile>(path)); });
    std::remove(path.c_str());
}

// A .pth archive: the zip directory, then every data.pkl in it through the unpickler.
void torch_pth(const uint8_t* data, size_t size) {
    expecting_engine_errors([&] {
        for (const ZipEntry& e : read_zip_entries(data, size, "fuzz.pth"))
            if (e.name.size() >= 8 && e.name.compare(e.name.size() - 8, 8, "data.pkl") == 0)
                read_torch_state_dict(std::string_view(reinterpret_cast<const char*>(e.data), e.size), "data.pkl");
    });
}

void hf_config(const uint8_t* data, size_t size) {
    expecting_engine_errors([&] { parse_hf_config(std::string(reinterpret_cast<const char*>(data), size), "config.json"); });
}

void meta_params(const uint8_t* data, size_t size) {
    expecting_engine_errors([&] { parse_meta_params(std::string(reinterpret_cast<const char*>(data), size), "params.json"); });
}

// A vocabulary that reads must also build a tokenizer that encodes and decodes without a crash.
void exercise(const EmbeddedVocab& vocab) {
    const auto tok = Tokenizer::from_embedded(vocab);
    const std::vector<int> ids = tok->encode("Hello, world!  \xF0\x9F\x99\x82 42 don't\n\t<|eot_id|>", true);
    tok->decode(ids);
}

// GGUF tokenizer.ggml.* (SentencePiece or gpt2 byte-level BPE).
void gguf_vocab(const uint8_t* data, size_t size) {
    const std::string path = as_file(data, size, ".gguf");
    if (path.empty()) return;
    expecting_engine_errors([&] { exercise(*read_gguf_vocabulary(path)); });
    std::remove(path.c_str());
}

// Meta's tiktoken tokenizer.model.
void tiktoken(const uint8_t* data, size_t size) {
    expecting_engine_errors([&] {
        exercise(read_tiktoken_model(std::string_view(reinterpret_cast<const char*>(data), size), "tokenizer.model"));
    });
}

// Hugging Face tokenizer.json.
void hf_tokenizer(const uint8_t* data, size_t size) {
    expecting_engine_errors([&] {
        exercise(*parse_hf_tokenizer_json(std::string_view(reinterpret_cast<const char*>(data), size), "tokenizer.json"));
    });
}

constexpr FuzzTarget kTargets[] = {
    {"gguf", gguf},           {"llama2c", llama2c},         {"safetensors", safetensors},
    {"torch_pth", torch_pth}, {"hf_config", hf_config},     {"meta_params", meta_params},
    {"gguf_vocab", gguf_vocab}, {"tiktoken", tiktoken},     {"hf_tokenizer", hf_tokenizer},
};

}  // namespace

std::span<const FuzzTarget> fuzz_targets() { return kTargets; }

}  // namespace llamadesk::fuzz
