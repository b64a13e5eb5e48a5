// SentencePiece (Llama 2, TinyLlama, Mistral): a tokenizer.model loaded as is, or a GGUF
// vocabulary serialized into a SentencePiece ModelProto in memory.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "tokenizer/tokenizer.h"

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace llamadesk {

class SentencePieceTokenizer final : public Tokenizer {
public:
    // A tokenizer.model's bytes; `path` names it in errors (TokenizerMismatch).
    static std::unique_ptr<SentencePieceTokenizer> from_model_file(std::string_view bytes,
                                                                   const std::string& path);
    static std::unique_ptr<SentencePieceTokenizer> from_embedded(const EmbeddedVocab& vocab);
    ~SentencePieceTokenizer() override;

    // SentencePiece encoding, dummy-prefix space included.
    std::vector<int> encode(std::string_view text, bool add_bos, bool add_eos = false) const override;
    // Encoded after a newline, whose pieces (the lone "▁" and the byte <0x0A>) merge with nothing,
    // which are then dropped.
    std::vector<int> encode_continuation(std::string_view text) const override;
    // SentencePiece decoding: the first piece's dummy-prefix space is dropped.
    std::string decode(const std::vector<int>& ids) const override;
    // "▁" becomes a space; after BOS, or with prev < 0, the leading space is dropped (so streaming
    // a BOS-led or bare answer gives exactly decode() of it); byte pieces <0xAB> become the raw
    // byte; <unk> gives " ⁇ ".
    std::string token_bytes(int prev, int id) const override;
    std::string piece(int id) const override;
    EmbeddedVocab vocabulary() const override;
    std::string kind() const override { return "SentencePiece"; }

private:
    SentencePieceTokenizer();
    // Loads a serialized ModelProto; `origin` names it in error messages.
    static std::unique_ptr<SentencePieceTokenizer> from_serialized(std::string_view model_proto,
                                                                   const std::string& origin,
                                                                   ErrorCode code,
                                                                   const std::vector<int32_t>& extra_eog = {});

    std::unique_ptr<sentencepiece::SentencePieceProcessor> sp_;
    std::string unk_surface_;  // what the unknown token decodes to (" \xE2\x81\x87 " by default)
};

}  // namespace llamadesk
