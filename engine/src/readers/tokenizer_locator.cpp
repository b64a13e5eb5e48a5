#include "readers/tokenizer_locator.h"

#include <filesystem>
#include <system_error>
#include <vector>

#include "core/error.h"
#include "readers/gguf_reader.h"
#include "readers/hf_tokenizer.h"

namespace fs = std::filesystem;

namespace llamadesk {

namespace {

std::vector<fs::path> model_files_in(const fs::path& dir) {
    std::vector<fs::path> found;
    std::error_code ec;
    for (const fs::directory_entry& e : fs::directory_iterator(dir, ec))
        if (e.is_regular_file(ec) && e.path().extension() == ".model") found.push_back(e.path());
    return found;
}

}  // namespace

std::string find_tokenizer_beside(const std::string& checkpoint_path, int vocab_size) {
    const fs::path dir = fs::path(checkpoint_path).parent_path().empty()
                             ? fs::path(".")
                             : fs::path(checkpoint_path).parent_path();
    std::error_code ec;
    for (const std::string& name : {std::string("tokenizer.model"),
                                   "tok" + std::to_string(vocab_size) + ".model"})
        if (fs::is_regular_file(dir / name, ec)) return (dir / name).string();
    const std::vector<fs::path> models = model_files_in(dir);
    return models.size() == 1 ? models[0].string() : std::string();
}

TokenizerSource tokenizer_from_path(const std::string& tokenizer_path) {
    std::error_code ec;
    TokenizerSource source;
    if (fs::is_directory(tokenizer_path, ec)) {
        const std::vector<fs::path> models = model_files_in(tokenizer_path);
        if (models.empty() && fs::is_regular_file(fs::path(tokenizer_path) / "tokenizer.json", ec)) {
            source.embedded = read_hf_tokenizer(tokenizer_path).vocab;
            return source;
        }
        if (models.size() != 1)
            fail(ErrorCode::FileNotFound, "expected exactly one SentencePiece .model file in " +
                                              tokenizer_path + ", found " +
                                              std::to_string(models.size()));
        source.model_file = models[0].string();
        return source;
    }
    if (!fs::is_regular_file(tokenizer_path, ec))
        fail(ErrorCode::FileNotFound, "tokenizer " + tokenizer_path + " does not exist");
    const std::string ext = fs::path(tokenizer_path).extension().string();
    if (ext == ".gguf") {
        source.embedded = read_gguf_vocabulary(tokenizer_path);
    } else if (fs::path(tokenizer_path).filename() == "tokenizer.json") {
        const fs::path dir = fs::path(tokenizer_path).parent_path();
        source.embedded = read_hf_tokenizer(dir.empty() ? "." : dir.string()).vocab;
    } else if (ext == ".bin") {
        fail(ErrorCode::Unsupported, tokenizer_path + " looks like a llama2.c tokenizer.bin, which "
                                                      "is not supported; pass the SentencePiece "
                                                      ".model file it was made from");
    } else {
        source.model_file = tokenizer_path;
    }
    return source;
}

}  // namespace llamadesk
