// Byte-level BPE (Llama 3), as Meta's tokenizer.py (tiktoken) and llama.cpp's llama-bpe encode:
// the pre-tokenizer splits the text into words; a word that is itself a token is that token;
// otherwise its bytes start as one symbol each and the adjacent pair of lowest merge rank is
// merged until no pair can be.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
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
    // Pair -> merge, open addressing with a multiplicative hash: the lookup is the inner loop of
    // encoding, where std::unordered_map's division and node chasing cost a quarter of the time.
    class MergeTable {
    public:
        void reserve(size_t n);
        bool insert(uint64_t key, Merge merge);  // false when the key is already there
        const Merge* find(uint64_t key) const;
        template <class F>
        void for_each(F&& f) const {
            for (const Slot& s : slots_)
                if (s.key != kEmpty) f(s.key, s.merge);
        }

    private:
        static constexpr uint64_t kEmpty = ~uint64_t(0);
        struct Slot {
            uint64_t key = kEmpty;
            Merge merge{};
        };
        size_t slot_of(uint64_t key) const { return size_t((key * 0x9E3779B97F4A7C15ull) >> shift_); }
        std::vector<Slot> slots_;
        int shift_ = 64;
    };
    BpeTokenizer(const std::string& pre) : pre_(pre), pretokenizer_(pre) {}
    void encode_word(std::string_view word, std::vector<int>& ids) const;
    void merge_short(std::string_view word, std::vector<int>& ids) const;
    void merge_long(std::string_view word, std::vector<int>& ids) const;

    std::string pre_;
    Pretokenizer pretokenizer_;
    std::vector<std::string> bytes_;     // what each token stands for (a special token: its text)
    std::vector<int32_t> types_;         // SentencePiece token types, as GGUF writes them
    // Looked up by string_view, so a word costs no allocation.
    struct BytesHash {
        using is_transparent = void;
        size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
    };
    std::unordered_map<std::string, int32_t, BytesHash, std::equal_to<>> id_of_bytes_;  // text tokens only, never control ones
    std::array<int32_t, 256> byte_id_{};  // the token of each single byte
    MergeTable merges_;
};

}  // namespace llamadesk
