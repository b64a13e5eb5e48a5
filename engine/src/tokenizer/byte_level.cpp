#include "tokenizer/byte_level.h"

#include <array>

namespace llamadesk {
namespace {

struct Alphabet {
    std::array<char32_t, 256> of_byte{};
    // Characters of the alphabet all lie below U+0144; code point -> byte + 1 (0: not in it).
    std::array<uint16_t, 0x144> byte_of{};

    Alphabet() {
        char32_t next = 0x100;
        for (int b = 0; b < 256; ++b) {
            const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
            of_byte[size_t(b)] = printable ? char32_t(b) : next++;
            byte_of[of_byte[size_t(b)]] = uint16_t(b + 1);
        }
    }
};

const Alphabet& alphabet() {
    static const Alphabet a;
    return a;
}

void append_utf8(std::string& out, char32_t c) {  // c < 0x800 in this alphabet
    if (c < 0x80) {
        out.push_back(char(c));
    } else {
        out.push_back(char(0xC0 | (c >> 6)));
        out.push_back(char(0x80 | (c & 0x3F)));
    }
}

}  // namespace

std::string bytes_to_byte_level(std::string_view bytes) {
    std::string out;
    out.reserve(bytes.size() * 2);
    for (const char b : bytes) append_utf8(out, alphabet().of_byte[static_cast<unsigned char>(b)]);
    return out;
}

std::optional<std::string> byte_level_to_bytes(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size();) {
        const auto b0 = static_cast<unsigned char>(text[i]);
        char32_t c;
        if (b0 < 0x80) {
            c = b0;
            i += 1;
        } else if ((b0 & 0xE0) == 0xC0 && i + 1 < text.size() &&
                   (static_cast<unsigned char>(text[i + 1]) & 0xC0) == 0x80) {
            c = char32_t((b0 & 0x1F) << 6 | (static_cast<unsigned char>(text[i + 1]) & 0x3F));
            i += 2;
        } else {
            return std::nullopt;
        }
        if (c >= alphabet().byte_of.size() || alphabet().byte_of[c] == 0) return std::nullopt;
        out.push_back(char(alphabet().byte_of[c] - 1));
    }
    return out;
}

}  // namespace llamadesk
