// write_hf_tokenizer(): a byte-level vocabulary as a Hugging Face folder carries it.
#include <cstdio>
#include <fstream>

#include "core/error.h"
#include "synthetic/synthetic_vocab.h"

namespace llamadesk {
namespace {

std::string quoted(std::string_view s) {
    std::string out = "\"";
    for (const char c : s) {
        const auto u = static_cast<unsigned char>(c);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (u < 0x20) {
            char hex[8];
            std::snprintf(hex, sizeof hex, "\\u%04x", unsigned(u));
            out += hex;
        } else {
            out += c;
        }
    }
    return out + "\"";
}

void write_file(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary);
    out << text;
    if (!out.flush()) fail(ErrorCode::Internal, "cannot write " + path);
}

}  // namespace

void write_hf_tokenizer(const EmbeddedVocab& vocab, const std::string& dir, const std::string& chat_template) {
    // Llama 3's pattern as its tokenizer.json spells it.
    const std::string pattern =
        R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
    std::string json = "{\"version\": \"1.0\", \"added_tokens\": [";
    std::string entries;
    bool first_added = true;
    for (size_t id = 0; id < vocab.tokens.size(); ++id) {
        const bool special = !vocab.token_types.empty() && vocab.token_types[id] != 1;
        if (special) {
            json += std::string(first_added ? "" : ", ") + "{\"id\": " + std::to_string(id) +
                    ", \"content\": " + quoted(vocab.tokens[id]) + ", \"special\": true}";
            first_added = false;
        } else {
            entries += std::string(entries.empty() ? "" : ", ") + quoted(vocab.tokens[id]) + ": " + std::to_string(id);
        }
    }
    json += "], \"pre_tokenizer\": {\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Split\", \"pattern\": "
            "{\"Regex\": " + quoted(pattern) + "}, \"behavior\": \"Isolated\", \"invert\": false}, {\"type\": "
            "\"ByteLevel\", \"add_prefix_space\": false, \"trim_offsets\": true, \"use_regex\": false}]}, "
            "\"decoder\": {\"type\": \"ByteLevel\"}, \"model\": {\"type\": \"BPE\", \"ignore_merges\": true, "
            "\"vocab\": {" + entries + "}, \"merges\": [";
    for (size_t i = 0; i < vocab.merges.size(); ++i) {
        const size_t space = vocab.merges[i].find(' ');
        json += std::string(i ? ", " : "") + "[" + quoted(vocab.merges[i].substr(0, space)) + ", " +
                quoted(vocab.merges[i].substr(space + 1)) + "]";
    }
    write_file(dir + "/tokenizer.json", json + "]}}\n");

    auto token = [&](int32_t id) { return id >= 0 ? quoted(vocab.tokens[size_t(id)]) : std::string("null"); };
    write_file(dir + "/tokenizer_config.json",
               "{\"bos_token\": " + token(vocab.bos_id) + ", \"eos_token\": " + token(vocab.eos_id) +
                   (chat_template.empty() ? "" : ", \"chat_template\": " + quoted(chat_template)) + "}\n");
    std::string eos = "[";
    for (size_t i = 0; i < vocab.eog_ids.size(); ++i) eos += (i ? ", " : "") + std::to_string(vocab.eog_ids[i]);
    write_file(dir + "/generation_config.json", "{\"eos_token_id\": " + eos + "]}\n");
}

}  // namespace llamadesk
