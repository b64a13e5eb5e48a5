#include "fuzz_targets.h"

#include <unistd.h>

#include <cstdio>
#include <string>
#include <string_view>

#include "core/error.h"
#include "model/checkpoint.h"
#include "readers/hf_config.h"
#include "readers/mapped_file.h"
#include "readers/meta_reader.h"
#include "readers/safetensors_file.h"
#include "readers/torch_pickle.h"
#include "readers/zip_archive.h"

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

constexpr FuzzTarget kTargets[] = {
    {"gguf", gguf},           {"llama2c", llama2c},         {"safetensors", safetensors},
    {"torch_pth", torch_pth}, {"hf_config", hf_config},     {"meta_params", meta_params},
};

}  // namespace

std::span<const FuzzTarget> fuzz_targets() { return kTargets; }

}  // namespace llamadesk::fuzz
