// SentencePiece tokenizer. One implementation serves every format: a tokenizer.model file is
// loaded as is; a GGUF vocabulary is first serialized into a SentencePiece ModelProto in memory.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "model/checkpoint.h"

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace llamadesk {

class Tokenizer {
public:
    // Throws EngineError(TokenizerMismatch / FileNotFound) with the path in the message.
    static std::unique_ptr<Tokenizer> from_file(const std::string& model_path);
    static std::unique_ptr<Tokenizer> from_embedded(const EmbeddedVocab& vocab);
    static std::unique_ptr<Tokenizer> from_source(const TokenizerSource& source);
    ~Tokenizer();

    // SentencePiece encoding (dummy-prefix space included), BOS first when add_bos.
    std::vector<int> encode(std::string_view text, bool add_bos, bool add_eos = false) const;
    std::string decode(const std::vector<int>& ids) const;

    // The bytes token `id` stands for when it follows `prev` ("▁" becomes a space; after BOS the
    // leading space is dropped; byte-fallback pieces <0xAB> become the raw byte). May be part of
    // a UTF-8 character: StreamDecoder assembles whole characters.
    std::string token_bytes(int prev, int id) const;

    int vocab_size() const;
    int bos_id() const;
    int eos_id() const;
    std::string piece(int id) const;

private:
    Tokenizer();
    std::unique_ptr<sentencepiece::SentencePieceProcessor> sp_;
};

// Turns a stream of token ids into text that never ends inside a UTF-8 character.
class StreamDecoder {
public:
    explicit StreamDecoder(const Tokenizer& tok, int prev_token);
    std::string push(int token);  // whole characters now complete (possibly empty)
    std::string flush();          // what is left (invalid bytes become U+FFFD)

private:
    const Tokenizer& tok_;
    int prev_;
    std::string pending_;
};

}  // namespace llamadesk
