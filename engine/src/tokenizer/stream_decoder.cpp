#include <string_view>

#include "tokenizer/tokenizer.h"

namespace llamadesk {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// The well-formed UTF-8 sequence at the start of `s` (Unicode table 3-7: no overlong forms, no
// surrogates, nothing past U+10FFFF): its length when complete, 0 when `s` ends before the
// sequence does but could still complete it, -1 when the first byte starts no valid sequence.
int utf8_sequence(std::string_view s) {
    const auto b0 = static_cast<unsigned char>(s[0]);
    int length;
    unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (b0 < 0x80) return 1;
    else if (b0 >= 0xC2 && b0 <= 0xDF) length = 2;
    else if (b0 == 0xE0) length = 3, lo = 0xA0;
    else if (b0 == 0xED) length = 3, hi = 0x9F;
    else if (b0 >= 0xE1 && b0 <= 0xEF) length = 3;
    else if (b0 == 0xF0) length = 4, lo = 0x90;
    else if (b0 == 0xF4) length = 4, hi = 0x8F;
    else if (b0 >= 0xF1 && b0 <= 0xF3) length = 4;
    else return -1;
    for (int i = 1; i < length; ++i) {
        if (size_t(i) >= s.size()) return 0;
        const auto b = static_cast<unsigned char>(s[size_t(i)]);
        if (b < (i == 1 ? lo : 0x80) || b > (i == 1 ? hi : 0xBF)) return -1;
    }
    return length;
}

}  // namespace

StreamDecoder::StreamDecoder(const Tokenizer& tok, int prev_token) : tok_(tok), prev_(prev_token) {}

std::string StreamDecoder::push(int token) {
    pending_ += tok_.token_bytes(prev_, token);
    prev_ = token;
    return take(false);
}

std::string StreamDecoder::flush() { return take(true); }

// Moves the whole characters at the front of pending_ to the result. A byte that starts no valid
// sequence becomes U+FFFD on its own, as in SentencePiece's decode, so streaming and decode()
// agree. An unfinished character at the end stays pending, unless this is the final flush.
std::string StreamDecoder::take(bool final) {
    std::string out;
    size_t pos = 0;
    while (pos < pending_.size()) {
        const int length = utf8_sequence(std::string_view(pending_).substr(pos));
        if (length == 0 && !final) break;
        if (length > 0) {
            out.append(pending_, pos, size_t(length));
            pos += size_t(length);
        } else {
            out += kReplacement;
            pos += 1;
        }
    }
    pending_.erase(0, pos);
    return out;
}

}  // namespace llamadesk
