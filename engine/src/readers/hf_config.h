// A Hugging Face LlamaForCausalLM config.json, checked field by field: wrong types, absurd values,
// another architecture, RoPE scaling or biases get a message naming the field.
#pragma once

#include <string>

#include "model/model_config.h"

namespace llamadesk {

struct HfConfig {
    ModelConfig config;
    bool tie_word_embeddings = false;
};

// text: the file's contents; path names it in messages.
HfConfig parse_hf_config(const std::string& text, const std::string& path);

}  // namespace llamadesk
