#include "tokenizer/tokenizer.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "core/error.h"
#include "tokenizer/bpe_tokenizer.h"
#include "tokenizer/sentencepiece_tokenizer.h"
#include "tokenizer/tiktoken_model.h"

namespace llamadesk {
namespace {

// Llama 2's tokenizer.model is 0.5 MB, Llama 3's tiktoken file 2.2 MB; anything this large is a
// wrong choice (weights, usually), refused before it is read into memory.
constexpr std::uintmax_t kMaxModelFileBytes = 64ull << 20;

// The control tokens Llama-family chat formats end a turn with, as llama.cpp collects them.
constexpr std::string_view kEndOfTurnTokens[] = {"<|eot_id|>", "<|eom_id|>", "<|end_of_text|>",
                                                 "<|im_end|>", "<|endoftext|>", "</s>"};

std::string read_model_file(const std::string& path) {
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    if (!std::filesystem::exists(status))
        fail(ErrorCode::FileNotFound, "tokenizer file not found: " + path);
    if (std::filesystem::is_directory(status))
        fail(ErrorCode::TokenizerMismatch,
             path + " is a folder; choose the tokenizer.model file inside it");
    const std::uintmax_t size = std::filesystem::file_size(path, ec);
    if (ec)
        fail(ErrorCode::FileNotFound, "cannot read tokenizer file " + path + ": " + ec.message());
    if (size == 0)
        fail(ErrorCode::TokenizerMismatch,
             path + " is empty; choose a SentencePiece or tiktoken tokenizer.model");
    if (size > kMaxModelFileBytes)
        fail(ErrorCode::TokenizerMismatch,
             path + " is not a tokenizer.model: it is " + std::to_string(size >> 20) +
                 " MiB, far larger than any tokenizer (is it the model's weights?)");
    std::ifstream in(path, std::ios::binary);
    if (!in)
        fail(ErrorCode::FileNotFound,
             "cannot open tokenizer file " + path + ": " + std::strerror(errno));
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad() || bytes.size() != size)
        fail(ErrorCode::FileNotFound, "cannot read tokenizer file " + path + " (read " +
                                          std::to_string(bytes.size()) + " of " +
                                          std::to_string(size) + " bytes)");
    return bytes;
}

}  // namespace

std::unique_ptr<Tokenizer> Tokenizer::from_file(const std::string& model_path) {
    const std::string bytes = read_model_file(model_path);
    // A GGUF vocabulary reaches the tokenizer through the GGUF reader and from_embedded().
    if (bytes.starts_with("GGUF"))
        fail(ErrorCode::TokenizerMismatch,
             model_path + " is a GGUF file, not a SentencePiece tokenizer.model");
    if (looks_like_tiktoken(bytes))
        return BpeTokenizer::from_vocab(read_tiktoken_model(bytes, model_path), model_path);
    return SentencePieceTokenizer::from_model_file(bytes, model_path);
}

std::unique_ptr<Tokenizer> Tokenizer::from_embedded(const EmbeddedVocab& vocab) {
    if (vocab.model == "gpt2") return BpeTokenizer::from_vocab(vocab, "the checkpoint's vocabulary");
    if (vocab.model == "llama" || vocab.model.empty()) return SentencePieceTokenizer::from_embedded(vocab);
    fail(ErrorCode::Unsupported, "the checkpoint's vocabulary is of type '" + vocab.model +
                                     "'; supported: 'llama' (SentencePiece) and 'gpt2' (byte-level BPE)");
}

std::unique_ptr<Tokenizer> Tokenizer::from_source(const TokenizerSource& source) {
    if (!source.model_file.empty()) return from_file(source.model_file);
    if (source.embedded) return from_embedded(*source.embedded);
    fail(ErrorCode::TokenizerMismatch,
         "this checkpoint has no vocabulary; choose its tokenizer.model");
}

void Tokenizer::set_vocabulary(int vocab_size, int bos_id, int eos_id,
                               std::unordered_map<std::string, int> specials,
                               const std::vector<int32_t>& extra_eog) {
    vocab_size_ = vocab_size;
    bos_id_ = bos_id;
    eos_id_ = eos_id;
    specials_ = std::move(specials);
    eog_ids_.clear();
    auto add = [&](int id) {
        if (id >= 0 && id < vocab_size_ && id != bos_id_ &&
            std::find(eog_ids_.begin(), eog_ids_.end(), id) == eog_ids_.end())
            eog_ids_.push_back(id);
    };
    add(eos_id_);
    for (int32_t id : extra_eog) add(id);
    for (std::string_view text : kEndOfTurnTokens) add(special_id(text));
}

bool Tokenizer::ends_generation(int id) const {
    return std::find(eog_ids_.begin(), eog_ids_.end(), id) != eog_ids_.end();
}

int Tokenizer::special_id(std::string_view text) const {
    const auto it = specials_.find(std::string(text));
    return it == specials_.end() ? -1 : it->second;
}

void Tokenizer::check_id(int id) const {
    if (id < 0 || id >= vocab_size())
        fail(ErrorCode::InvalidArgument, "token id " + std::to_string(id) +
                                             " is outside the vocabulary of " +
                                             std::to_string(vocab_size()) + " tokens");
}

}  // namespace llamadesk
