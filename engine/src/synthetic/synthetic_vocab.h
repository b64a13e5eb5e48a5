// A made-up SentencePiece-style vocabulary of any size, so synthetic models are fully usable.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "model/checkpoint.h"

namespace llamadesk {

// <unk>, <s>, </s>, then (when they fit) the 256 byte-fallback pieces <0x00>..<0xFF>, then unique
// filler pieces ("▁", "a", ..., "▁a", ...) with decreasing scores.
std::shared_ptr<EmbeddedVocab> make_synthetic_vocab(int vocab_size);

// A byte-level BPE vocabulary ("gpt2", pre llama-bpe) of the 256 byte tokens, the merged tokens
// of `merges` ("left right" in the byte-level alphabet, by rank) and then Llama 3's special tokens
// <|begin_of_text|> <|end_of_text|> <|start_header_id|> <|end_header_id|> <|eot_id|>.
EmbeddedVocab make_bpe_vocab(const std::vector<std::string>& merges);

// The normal tokens of a byte-level vocabulary as a tiktoken file (base64 token, space, rank =
// id), the form of Meta's Llama 3 tokenizer.model.
void write_tiktoken(const EmbeddedVocab& vocab, const std::string& path);

// The same vocabulary as a Hugging Face folder holds it: tokenizer.json (BPE, Llama 3's Split
// pattern and ByteLevel, merges as pairs, the special tokens as added_tokens),
// tokenizer_config.json (BOS, EOS, the chat template when given) and generation_config.json (the
// end-of-generation ids).
void write_hf_tokenizer(const EmbeddedVocab& vocab, const std::string& dir, const std::string& chat_template = {});

}  // namespace llamadesk
