// Where a checkpoint's vocabulary comes from: an explicit path, else a SentencePiece model beside
// the checkpoint.
#pragma once

#include <string>

#include "model/checkpoint.h"

namespace llamadesk {

// tokenizer_path may be a SentencePiece or tiktoken .model, a GGUF file holding a vocabulary, a
// Hugging Face tokenizer.json, or a folder holding one .model or a tokenizer.json. Throws EngineError(FileNotFound / Unsupported).
TokenizerSource tokenizer_from_path(const std::string& tokenizer_path);

// tokenizer.model, tok<vocab_size>.model, or the only *.model in the checkpoint's folder; empty
// when there is none.
std::string find_tokenizer_beside(const std::string& checkpoint_path, int vocab_size);

}  // namespace llamadesk
