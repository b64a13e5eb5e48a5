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
                    ", \"content\": " + quoted(vocab.tokens[id]) +
                    ", \"single_word\": false, \"lstrip\": false, \"rstrip\": false, \"normalized\": false, "
                    "\"special\": true}";
            first_added = false;
        } else {
            entries += std::string(entries.empty() ? "" : ", ") + quoted(vocab.tokens[id]) + ": " + std::to_string(id);
        }
    }
    // Every field tokenizers' own loader requires, as save_pretrained writes them. Llama 3's
    // post-processor puts BOS first: convert_hf_to_gguf.py tells llama-bpe by the ids it makes.
    std::string post_processor = "null";
    if (vocab.bos_id >= 0) {
        const std::string bos = quoted(vocab.tokens[size_t(vocab.bos_id)]);
        const std::string first = "{\"SpecialToken\": {\"id\": " + bos + ", \"type_id\": 0}}";
        post_processor = "{\"type\": \"Sequence\", \"processors\": [{\"type\": \"ByteLevel\", \"add_prefix_space\": true, "
                         "\"trim_offsets\": false, \"use_regex\": true}, {\"type\": \"TemplateProcessing\", \"single\": [" +
                         first + ", {\"Sequence\": {\"id\": \"A\", \"type_id\": 0}}], \"pair\": [" + first +
                         ", {\"Sequence\": {\"id\": \"A\", \"type_id\": 0}}, {\"SpecialToken\": {\"id\": " + bos +
                         ", \"type_id\": 1}}, {\"Sequence\": {\"id\": \"B\", \"type_id\": 1}}], \"special_tokens\": {" + bos +
                         ": {\"id\": " + bos + ", \"ids\": [" + std::to_string(vocab.bos_id) + "], \"tokens\": [" + bos + "]}}}]}";
    }
    json += "], \"truncation\": null, \"padding\": null, \"normalizer\": null, \"post_processor\": " + post_processor +
            ", \"pre_tokenizer\": {\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Split\", \"pattern\": "
            "{\"Regex\": " + quoted(pattern) + "}, \"behavior\": \"Isolated\", \"invert\": false}, {\"type\": "
            "\"ByteLevel\", \"add_prefix_space\": false, \"trim_offsets\": true, \"use_regex\": false}]}, "
            "\"decoder\": {\"type\": \"ByteLevel\", \"add_prefix_space\": true, \"trim_offsets\": true, "
            "\"use_regex\": true}, \"model\": {\"type\": \"BPE\", \"dropout\": null, \"unk_token\": null, "
            "\"continuing_subword_prefix\": null, \"end_of_word_suffix\": null, \"fuse_unk\": false, "
            "\"byte_fallback\": false, \"ignore_merges\": true, "
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
    std::string eos = vocab.eog_ids.empty() ? std::to_string(vocab.eos_id) : "[";
    for (size_t i = 0; i < vocab.eog_ids.size(); ++i)
        eos += (i ? ", " : "") + std::to_string(vocab.eog_ids[i]) + (i + 1 == vocab.eog_ids.size() ? "]" : "");
    write_file(dir + "/generation_config.json", "{\"eos_token_id\": " + eos + "}\n");
}

}  // namespace llamadesk
