// write_tiktoken(): a byte-level vocabulary as Meta ships Llama 3's tokenizer.model.
#include <fstream>

#include "core/error.h"
#include "synthetic/synthetic_vocab.h"
#include "tokenizer/byte_level.h"

namespace llamadesk {
namespace {

std::string base64(std::string_view bytes) {
    static constexpr char kAlphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    for (size_t i = 0; i < bytes.size(); i += 3) {
        const size_t n = std::min<size_t>(3, bytes.size() - i);
        uint32_t bits = 0;
        for (size_t j = 0; j < 3; ++j)
            bits = bits << 8 | (j < n ? static_cast<unsigned char>(bytes[i + j]) : 0u);
        for (size_t j = 0; j < 4; ++j)
            out.push_back(j <= n ? kAlphabet[(bits >> (18 - 6 * j)) & 63] : '=');
    }
    return out;
}

}  // namespace

void write_tiktoken(const EmbeddedVocab& vocab, const std::string& path) {
    std::ofstream out(path, std::ios::binary);
    for (size_t id = 0; id < vocab.tokens.size(); ++id) {
        if (!vocab.token_types.empty() && vocab.token_types[id] != 1) break;  // the specials follow
        const std::optional<std::string> bytes = byte_level_to_bytes(vocab.tokens[id]);
        if (!bytes)
            fail(ErrorCode::InvalidArgument, "token " + std::to_string(id) + " is not byte-level");
        out << base64(*bytes) << ' ' << id << '\n';
    }
    if (!out.flush()) fail(ErrorCode::Internal, "cannot write " + path);
}

}  // namespace llamadesk
