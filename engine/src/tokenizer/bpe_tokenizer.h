// Byte-level BPE (Llama 3), as Meta's tokenizer.py (tiktoken) and llama.cpp's llama-bpe encode:
// the pre-tokenizer splits the text into words; a word that is itself a token is that token;
// otherwise its bytes start as one symbol each and the adjacent pair of lowest merge rank is
// merged until no pair can be.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "tokenizer/pretokenizer.h"
#include "tokenizer/tokenizer.h"

namespace llamadesk {

class BpeTokenizer final : public Tokenizer {
public:
    // vocab.model "gpt2": tokens in GPT-2's byte-level alphabet, merges "left right" by rank.
    // Throws EngineError(BadFormat) naming `origin`, the field, the entry and the numbers; or
    // Unsupported for a pre-tokenizer it lacks.
    static std::unique_ptr<BpeTokenizer> from_vocab(const EmbeddedVocab& vocab,
                                                    const std::string& origin);

    std::vector<int> encode(std::string_view text, bool add_bos, bool add_eos = false) const override;
    std::string decode(const std::vector<int>& ids) const override;
    std::string token_bytes(int prev, int id) const override;
    std::string piece(int id) const override;
    EmbeddedVocab vocabulary() const override;
    std::string kind() const override { return "byte-level BPE (" + pre_ + ")"; }

private:
    struct Merge {
        int32_t rank;
        int32_t id;  // the token the pair becomes
    };
    static uint64_t pair_key(int32_t left, int32_t right) {
        return uint64_t(uint32_t(left)) << 32 | uint32_t(right);
    }
    BpeTokenizer(const std::string& pre) : pre_(pre), pretokenizer_(pre) {}
    void encode_word(std::string_view word, std::vector<int>& ids) const;

    std::string pre_;
    Pretokenizer pretokenizer_;
    std::vector<std::string> bytes_;     // what each token stands for (a special token: its text)
    std::vector<int32_t> types_;         // SentencePiece token types, as GGUF writes them
    std::unordered_map<std::string, int32_t> id_of_bytes_;  // text tokens only, never control ones
    std::array<int32_t, 256> byte_id_{};  // the token of each single byte
    std::unordered_map<uint64_t, Merge> merges_;
};

}  // namespace llamadesk
