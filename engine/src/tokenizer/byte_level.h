// GPT-2's byte-level alphabet: every byte has a printable Unicode character, so a BPE vocabulary of
// byte strings can be written as text (GGUF tokenizer.ggml.tokens, tokenizer.json). Bytes that are
// already printable Latin-1 stand for themselves; the others (controls, space, 0x7F-0xA0, 0xAD)
// take U+0100 onwards in byte order.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace llamadesk {

// The token text for raw bytes ("Ġthe" for " the").
std::string bytes_to_byte_level(std::string_view bytes);

// The raw bytes a token text stands for, or nullopt when it holds a character outside the
// alphabet (a special token such as "<|eot_id|>" is inside it: ASCII punctuation stands for itself).
std::optional<std::string> byte_level_to_bytes(std::string_view text);

}  // namespace llamadesk
