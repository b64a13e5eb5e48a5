// The one tokenizer interface. Two implementations: SentencePiece (Llama 2; sentencepiece_tokenizer)
// and byte-level BPE (Llama 3; bpe_tokenizer). Nothing above this header knows which one it has.
//
// Special tokens are never made from text: encode() treats "<|eot_id|>" or "<s>" in a person's
// message as plain characters. Only a chat format places them, by id (special_id()).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "model/checkpoint.h"

namespace llamadesk {

class Tokenizer {
public:
    // A SentencePiece tokenizer.model or a tiktoken tokenizer.model (Meta's Llama 3), by content.
    // Throw EngineError: TokenizerMismatch / FileNotFound with the path; BadFormat / Unsupported
    // naming the token, line or field.
    static std::unique_ptr<Tokenizer> from_file(const std::string& model_path);
    // tokenizer.ggml.model "llama" (SentencePiece) or "gpt2" (byte-level BPE).
    static std::unique_ptr<Tokenizer> from_embedded(const EmbeddedVocab& vocab);
    static std::unique_ptr<Tokenizer> from_source(const TokenizerSource& source);
    virtual ~Tokenizer() = default;

    // The text as plain characters, BOS first when add_bos.
    virtual std::vector<int> encode(std::string_view text, bool add_bos, bool add_eos = false) const = 0;
    // The text as it continues a prompt (after a special token, or after text encoded before it):
    // SentencePiece puts no dummy-prefix space there, as llama.cpp and Hugging Face's non-legacy
    // Llama tokenizer do not. Byte-level BPE has no such space, so it is encode(text, false).
    virtual std::vector<int> encode_continuation(std::string_view text) const { return encode(text, false); }
    // Control tokens vanish; bytes that do not form valid UTF-8 become U+FFFD (one per byte).
    // Ids outside the vocabulary throw EngineError(InvalidArgument).
    virtual std::string decode(const std::vector<int>& ids) const = 0;
    // The bytes token `id` stands for when it follows `prev` (-1: nothing before). May be part
    // of a UTF-8 character: StreamDecoder assembles whole characters. Control tokens give "".
    virtual std::string token_bytes(int prev, int id) const = 0;
    // The token's text as the vocabulary spells it ("▁the", "Ġthe", "<|eot_id|>").
    virtual std::string piece(int id) const = 0;
    // Every token with its score, type (and merges), as a GGUF file carries a vocabulary.
    virtual EmbeddedVocab vocabulary() const = 0;
    // "SentencePiece" or "byte-level BPE (llama-bpe)", for the model info.
    virtual std::string kind() const = 0;

    int vocab_size() const { return vocab_size_; }
    int bos_id() const { return bos_id_; }
    int eos_id() const { return eos_id_; }
    // End of generation is a set: EOS, the vocabulary's end-of-turn ids, and the control tokens
    // every Llama-family chat format ends a turn with (<|eot_id|>, <|eom_id|>, </s>, ...).
    bool ends_generation(int id) const;
    const std::vector<int>& end_of_generation_ids() const { return eog_ids_; }
    // The id of a control or user-defined token by its text, or -1 when the vocabulary has none.
    int special_id(std::string_view text) const;

protected:
    // specials: text -> id of every control and user-defined token; extra_eog: ids the source
    // names as ending a turn (GGUF eot/eom, Hugging Face eos_token_id lists).
    void set_vocabulary(int vocab_size, int bos_id, int eos_id,
                        std::unordered_map<std::string, int> specials,
                        const std::vector<int32_t>& extra_eog);
    void check_id(int id) const;

private:
    int vocab_size_ = 0, bos_id_ = -1, eos_id_ = -1;
    std::unordered_map<std::string, int> specials_;
    std::vector<int> eog_ids_;
};

// Turns a stream of token ids into text that never ends inside a UTF-8 character.
class StreamDecoder {
public:
    // prev_token: the token before the first one pushed (the prompt's last), or -1 for none.
    explicit StreamDecoder(const Tokenizer& tok, int prev_token);
    std::string push(int token);  // whole characters now complete (possibly empty)
    // What is left; bytes that form no valid character become U+FFFD, one each, as in decode().
    std::string flush();

private:
    std::string take(bool final);

    const Tokenizer& tok_;
    int prev_;
    std::string pending_;
};

}  // namespace llamadesk
