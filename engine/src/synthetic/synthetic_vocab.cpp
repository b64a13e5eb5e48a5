#include "synthetic/synthetic_vocab.h"

#include <cstdio>

#include "tokenizer/byte_level.h"
#include "tokenizer/sentencepiece_proto.h"

namespace llamadesk {

namespace {

// The i-th string over the alphabet {"▁", a..z}, shortest first (a bijective base-27 count), so
// every filler piece is distinct.
std::string filler_piece(int i) {
    static const std::string kSpace = "\xe2\x96\x81";  // U+2581, SentencePiece's space
    std::string piece;
    for (int n = i + 1; n > 0; n = (n - 1) / 27) {
        const int digit = (n - 1) % 27;
        piece.insert(0, digit == 0 ? kSpace : std::string(1, char('a' + digit - 1)));
    }
    return piece;
}

}  // namespace

std::shared_ptr<EmbeddedVocab> make_synthetic_vocab(int vocab_size) {
    auto v = std::make_shared<EmbeddedVocab>();
    v->model = "llama";
    auto add = [&](std::string piece, int type) {
        if (int(v->tokens.size()) >= vocab_size) return;
        v->tokens.push_back(std::move(piece));
        v->scores.push_back(type == kNormal ? -float(v->tokens.size()) : 0.0f);
        v->token_types.push_back(type);
    };
    add("<unk>", kUnknown);
    add("<s>", kControl);
    add("</s>", kControl);
    if (vocab_size >= 3 + 256)
        for (int b = 0; b < 256; ++b) {
            char name[8];
            std::snprintf(name, sizeof(name), "<0x%02X>", b);
            add(name, kByte);
        }
    for (int i = 0; int(v->tokens.size()) < vocab_size; ++i) add(filler_piece(i), kNormal);
    v->unk_id = 0;
    v->bos_id = vocab_size > 1 ? 1 : 0;
    v->eos_id = vocab_size > 2 ? 2 : 0;
    v->add_bos = true;
    return v;
}

EmbeddedVocab make_bpe_vocab(const std::vector<std::string>& merges) {
    EmbeddedVocab v;
    v.model = "gpt2";
    v.pre = "llama-bpe";
    for (int b = 0; b < 256; ++b) v.tokens.push_back(bytes_to_byte_level(std::string(1, char(b))));
    for (const std::string& merge : merges) {
        const size_t space = merge.find(' ');
        v.tokens.push_back(merge.substr(0, space) + merge.substr(space + 1));
    }
    v.token_types.assign(v.tokens.size(), 1);
    v.merges = merges;
    const int32_t first_special = int32_t(v.tokens.size());
    for (const char* special : {"<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>",
                                "<|end_header_id|>", "<|eot_id|>"}) {
        v.tokens.push_back(special);
        v.token_types.push_back(3);
    }
    v.bos_id = first_special;
    v.eos_id = first_special + 1;
    v.unk_id = -1;
    return v;
}

}  // namespace llamadesk
