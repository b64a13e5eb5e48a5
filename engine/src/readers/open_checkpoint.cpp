// open_checkpoint(): folder -> file, format detection by content, then the tokenizer source.
#include <cstring>
#include <filesystem>
#include <system_error>

#include "core/error.h"
#include "model/checkpoint.h"
#include "readers/gguf_reader.h"
#include "readers/hf_reader.h"
#include "readers/meta_reader.h"
#include "readers/llama2c_reader.h"
#include "readers/mapped_file.h"
#include "readers/hf_tokenizer.h"
#include "readers/tokenizer_locator.h"

namespace fs = std::filesystem;

namespace llamadesk {

namespace {

bool starts_with_gguf_magic(const MappedFile& f) {
    return f.size() >= 4 && std::memcmp(f.data(), "GGUF", 4) == 0;
}

// A GGUF with tensors, as opposed to a vocabulary-only file (the tensor count follows the magic
// and the version).
bool is_gguf_model(const std::string& path) {
    const MappedFile f(path);
    uint64_t n_tensors = 0;
    if (!starts_with_gguf_magic(f) || f.size() < 16) return false;
    std::memcpy(&n_tensors, f.data() + 8, 8);
    return n_tensors > 0;
}

// The checkpoint in a folder: its only GGUF model, else its only llama2.c .bin (vocabulary-only
// GGUFs and llama2.c tokenizer.bin files are told apart by content). Several candidates: an
// error listing them.
std::string pick_checkpoint_in(const std::string& dir) {
    std::vector<std::string> ggufs, bins;
    std::error_code ec;
    for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
        if (!e.is_regular_file(ec)) continue;
        const std::string ext = e.path().extension().string();
        try {
            if (ext == ".gguf" && is_gguf_model(e.path().string()))
                ggufs.push_back(e.path().string());
            else if (ext == ".bin" && looks_like_llama2c(MappedFile(e.path().string())))
                bins.push_back(e.path().string());
        } catch (const EngineError&) {  // unreadable: not a candidate
        }
    }
    if (ec) fail(ErrorCode::FileNotFound, "cannot list folder " + dir + ": " + ec.message());
    // GGUF wins over a .bin: it carries its own vocabulary and hyper-parameters.
    const std::vector<std::string>& candidates = ggufs.empty() ? bins : ggufs;
    if (candidates.size() == 1) return candidates[0];
    if (candidates.empty())
        fail(ErrorCode::FileNotFound, "no checkpoint (.gguf or llama2.c .bin) in folder " + dir);
    std::string list;
    for (const std::string& c : candidates) list += "\n  " + c;
    fail(ErrorCode::InvalidArgument,
         "folder " + dir + " holds several checkpoints; choose one of:" + list);
}

Checkpoint read_by_content(const std::shared_ptr<const MappedFile>& file, bool with_vocabulary) {
    if (starts_with_gguf_magic(*file)) return read_gguf_checkpoint(file, with_vocabulary);
    const std::string ext = fs::path(file->path()).extension().string();
    if (ext == ".gguf")
        fail(ErrorCode::BadFormat, file->path() + " is named .gguf but does not start with the "
                                                  "GGUF magic; the file is corrupt or not GGUF");
    if (ext == ".safetensors")
        fail(ErrorCode::BadFormat, file->path() + " is not in a Hugging Face model folder (config.json beside "
                                                  "model.safetensors or model.safetensors.index.json)");
    if (ext == ".pth" || ext == ".pt")
        fail(ErrorCode::BadFormat, file->path() + " is not in a Meta checkpoint folder (params.json beside "
                                                  "consolidated.00.pth)");
    // llama2.c files have no magic (legacy header) or "ak42"; the reader checks every field.
    return read_llama2c_checkpoint(file);
}

enum class FolderFormat { None, HuggingFace, Meta };

struct FolderCheckpoint {
    FolderFormat format = FolderFormat::None;
    std::string dir;
};

// A Hugging Face or Meta folder named by itself or by one of its files (config.json or a
// .safetensors; params.json or a consolidated.*.pth).
FolderCheckpoint folder_checkpoint_of(const std::string& path) {
    std::error_code ec;
    const fs::path p(path);
    const bool is_dir = fs::is_directory(path, ec);
    const std::string dir = is_dir ? path : p.parent_path().empty() ? std::string(".") : p.parent_path().string();
    const bool hf_member = is_dir || p.filename() == "config.json" || p.extension() == ".safetensors";
    const bool meta_member = is_dir || p.filename() == "params.json" || p.extension() == ".pth";
    if (hf_member && is_hf_folder(dir)) return {FolderFormat::HuggingFace, dir};
    if (meta_member && is_meta_folder(dir)) return {FolderFormat::Meta, dir};
    return {};
}

// tokenizer.model beside the weights (SentencePiece, or Meta's tiktoken), else tokenizer.json.
void folder_tokenizer(Checkpoint& ckpt, const std::string& dir) {
    ckpt.tokenizer.model_file = find_tokenizer_beside((fs::path(dir) / "weights").string(),  // looks in dir
                                                      ckpt.config.vocab_size);
    std::error_code ec;
    if (ckpt.tokenizer.model_file.empty() && fs::is_regular_file(fs::path(dir) / "tokenizer.json", ec)) {
        HfTokenizer hf = read_hf_tokenizer(dir);
        ckpt.tokenizer.embedded = std::move(hf.vocab);
        if (ckpt.chat_template.empty()) ckpt.chat_template = std::move(hf.chat_template);
    }
}

}  // namespace

Checkpoint open_checkpoint(const std::string& path, const std::string& tokenizer_path) {
    std::error_code ec;
    if (!fs::exists(path, ec)) fail(ErrorCode::FileNotFound, "model " + path + " does not exist");
    const FolderCheckpoint folder = folder_checkpoint_of(path);
    const std::string file_path = folder.format != FolderFormat::None ? folder.dir
                                  : fs::is_directory(path, ec)         ? pick_checkpoint_in(path)
                                                                       : path;
    Checkpoint ckpt = folder.format == FolderFormat::HuggingFace ? read_hf_checkpoint(folder.dir)
                      : folder.format == FolderFormat::Meta      ? read_meta_checkpoint(folder.dir)
                      : read_by_content(std::make_shared<const MappedFile>(file_path), tokenizer_path.empty());

    if (!tokenizer_path.empty()) {
        ckpt.tokenizer = tokenizer_from_path(tokenizer_path);
    } else if (folder.format != FolderFormat::None) {
        folder_tokenizer(ckpt, folder.dir);
    } else if (!ckpt.tokenizer.embedded) {
        ckpt.tokenizer.model_file = find_tokenizer_beside(file_path, ckpt.config.vocab_size);
    }
    return ckpt;
}

}  // namespace llamadesk
