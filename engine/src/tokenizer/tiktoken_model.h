// Meta's Llama 3 tokenizer.model: tiktoken's format, one base64 token and its rank per line. The
// ranks are the ids; the 256 special tokens after them are not in the file but in Meta's
// tokenizer.py, and are named here as it names them (Llama 3.1 onwards).
#pragma once

#include <string>
#include <string_view>

#include "model/checkpoint.h"

namespace llamadesk {

// Whether the file's first line reads as "base64 rank".
bool looks_like_tiktoken(std::string_view bytes);

// The vocabulary as a GGUF gpt2 one: tokens in the byte-level alphabet, merges derived from the
// ranks (each token splits into two lower-ranked tokens; sorted by the token's rank, as
// transformers' TikTokenConverter orders them). Throws EngineError(BadFormat) naming the path,
// the line and the numbers: a line that does not decode, a repeated or missing rank.
EmbeddedVocab read_tiktoken_model(std::string_view bytes, const std::string& path);

}  // namespace llamadesk
