// A Hugging Face folder's byte-level BPE tokenizer: tokenizer.json (BPE model, ByteLevel
// pre-tokenizer and decoder, added_tokens), tokenizer_config.json (BOS, EOS, chat_template) and
// generation_config.json / config.json (the eos_token_id list that ends generation).
#pragma once

#include <memory>
#include <string>

#include "model/checkpoint.h"

namespace llamadesk {

struct HfTokenizer {
    std::shared_ptr<EmbeddedVocab> vocab;
    std::string chat_template;  // tokenizer_config.json's, when it has one
};

// Throws EngineError naming the file and field: BadFormat (ids that skip or repeat, a merge that
// is not two tokens), Unsupported (another model type or pre-tokenizer, naming the supported one).
HfTokenizer read_hf_tokenizer(const std::string& dir);

// tokenizer.json's text alone (no BOS, EOS or end-of-generation ids: those are in the configs);
// `where` names it in errors.
std::shared_ptr<EmbeddedVocab> parse_hf_tokenizer_json(std::string_view text, const std::string& where);

}  // namespace llamadesk
