// SentencePiece tokenizer. One implementation serves every format: a tokenizer.model file is
// loaded as is; a GGUF vocabulary is first serialized into a SentencePiece ModelProto in memory.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "llamadesk/engine.h"
#include "model/checkpoint.h"

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace llamadesk {

class Tokenizer {
public:
    // Throw EngineError with what is wrong: from_file TokenizerMismatch / FileNotFound with the
    // path in the message; from_embedded BadFormat / Unsupported naming the token and field.
    static std::unique_ptr<Tokenizer> from_file(const std::string& model_path);
    static std::unique_ptr<Tokenizer> from_embedded(const EmbeddedVocab& vocab);
    static std::unique_ptr<Tokenizer> from_source(const TokenizerSource& source);
    ~Tokenizer();

    // SentencePiece encoding (dummy-prefix space included), BOS first when add_bos.
    std::vector<int> encode(std::string_view text, bool add_bos, bool add_eos = false) const;
    // SentencePiece decoding: control tokens vanish, the first piece's dummy-prefix space is
    // dropped, byte pieces that do not form valid UTF-8 become U+FFFD (one per byte).
    // Ids outside the vocabulary throw EngineError(InvalidArgument).
    std::string decode(const std::vector<int>& ids) const;

    // The bytes token `id` stands for when it follows `prev` ("▁" becomes a space; after BOS the
    // leading space is dropped; byte-fallback pieces <0xAB> become the raw byte). May be part of
    // a UTF-8 character: StreamDecoder assembles whole characters.
    // prev < 0 (nothing before) drops the leading space too, so streaming a BOS-led or bare
    // answer gives exactly decode() of it (decode() drops only the text's first leading space,
    // so the two differ after a BOS in the middle). Control tokens give "", <unk> " ⁇ ".
    std::string token_bytes(int prev, int id) const;

    int vocab_size() const;
    int bos_id() const;
    int eos_id() const;
    std::string piece(int id) const;
    // Every piece with its score and SentencePiece type, as a GGUF file carries a vocabulary.
    EmbeddedVocab vocabulary() const;

private:
    Tokenizer();
    // Loads a serialized ModelProto; `origin` names it in error messages.
    static std::unique_ptr<Tokenizer> from_serialized(std::string_view model_proto,
                                                      const std::string& origin, ErrorCode code);
    void check_id(int id) const;

    std::unique_ptr<sentencepiece::SentencePieceProcessor> sp_;
    std::string unk_surface_;  // what the unknown token decodes to (" \xE2\x81\x87 " by default)
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
