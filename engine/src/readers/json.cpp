#include "readers/json.h"

#include <cmath>
#include <cstdlib>
#include <unordered_set>

#include "core/error.h"

namespace llamadesk {

namespace {

class Parser {
public:
    Parser(std::string_view text, const std::string& source, int64_t max_values)
        : text_(text), source_(source), max_values_(max_values) {}

    JsonValue document() {
        JsonValue v = value(0);
        skip_space();
        if (pos_ != text_.size()) error("text after the JSON value");
        return v;
    }

private:
    [[noreturn]] void error(const std::string& what) const {
        fail(ErrorCode::BadFormat, source_ + ": invalid JSON at byte " + std::to_string(pos_) + ": " + what);
    }

    void skip_space() {
        while (pos_ < text_.size() &&
               (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r'))
            ++pos_;
    }

    char peek() {
        skip_space();
        if (pos_ >= text_.size()) error("unexpected end of text");
        return text_[pos_];
    }

    void expect(char c) {
        if (peek() != c) error(std::string("expected '") + c + "'");
        ++pos_;
    }

    bool literal(std::string_view word) {
        if (text_.substr(pos_, word.size()) != word) return false;
        pos_ += word.size();
        return true;
    }

    JsonValue value(int depth) {
        if (depth > kMaxJsonDepth) error("nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
        if (++n_values_ > max_values_) error("more than " + std::to_string(max_values_) + " values");
        JsonValue v;
        const char c = peek();
        if (c == '{') {
            v.kind = JsonValue::Kind::Object;
            ++pos_;
            if (peek() == '}') return ++pos_, v;
            std::unordered_set<std::string> keys;
            for (;;) {
                if (peek() != '"') error("expected a member name");
                std::string key = string_literal();
                if (!keys.insert(key).second) error("member \"" + printable(key) + "\" appears twice");
                expect(':');
                v.members.push_back({std::move(key), value(depth + 1)});
                if (peek() == '}') return ++pos_, v;
                expect(',');
            }
        }
        if (c == '[') {
            v.kind = JsonValue::Kind::Array;
            ++pos_;
            if (peek() == ']') return ++pos_, v;
            for (;;) {
                v.items.push_back(value(depth + 1));
                if (peek() == ']') return ++pos_, v;
                expect(',');
            }
        }
        if (c == '"') {
            v.kind = JsonValue::Kind::String;
            v.string = string_literal();
            return v;
        }
        if (literal("true") || literal("false")) {
            v.kind = JsonValue::Kind::Bool;
            v.boolean = text_[pos_ - 1] == 'e' && text_[pos_ - 2] == 'u';
            return v;
        }
        if (literal("null")) return v;
        if (c == '-' || (c >= '0' && c <= '9')) return number();
        error(std::string("unexpected character '") + printable(std::string(1, c)) + "'");
    }

    JsonValue number() {
        const size_t begin = pos_;
        bool integral = true;
        if (text_[pos_] == '-') ++pos_;
        const size_t digits = pos_;
        while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
        if (pos_ == digits) error("a number needs digits");
        if (text_[digits] == '0' && pos_ - digits > 1) error("a number may not start with 0");
        if (pos_ < text_.size() && text_[pos_] == '.') {
            integral = false;
            const size_t fraction = ++pos_;
            while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
            if (pos_ == fraction) error("a fraction needs digits");
        }
        if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
            integral = false;
            ++pos_;
            if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
            const size_t exponent = pos_;
            while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
            if (pos_ == exponent) error("an exponent needs digits");
        }
        const std::string literal_text(text_.substr(begin, pos_ - begin));
        JsonValue v;
        v.kind = JsonValue::Kind::Number;
        v.number = std::strtod(literal_text.c_str(), nullptr);
        if (integral && literal_text.size() <= 19) v.integer = std::strtoll(literal_text.c_str(), nullptr, 10);
        return v;
    }

    unsigned hex4() {
        if (text_.size() - pos_ < 4) error("unfinished \\u escape");
        unsigned code = 0;
        for (int i = 0; i < 4; ++i) {
            const char h = text_[pos_++];
            code <<= 4;
            if (h >= '0' && h <= '9') code |= unsigned(h - '0');
            else if (h >= 'a' && h <= 'f') code |= unsigned(h - 'a' + 10);
            else if (h >= 'A' && h <= 'F') code |= unsigned(h - 'A' + 10);
            else error("bad \\u escape");
        }
        return code;
    }

    static void append_utf8(std::string& out, unsigned code) {
        if (code < 0x80) {
            out += char(code);
        } else if (code < 0x800) {
            out += char(0xc0 | (code >> 6));
            out += char(0x80 | (code & 0x3f));
        } else if (code < 0x10000) {
            out += char(0xe0 | (code >> 12));
            out += char(0x80 | ((code >> 6) & 0x3f));
            out += char(0x80 | (code & 0x3f));
        } else {
            out += char(0xf0 | (code >> 18));
            out += char(0x80 | ((code >> 12) & 0x3f));
            out += char(0x80 | ((code >> 6) & 0x3f));
            out += char(0x80 | (code & 0x3f));
        }
    }

    std::string string_literal() {
        ++pos_;  // the opening quote
        std::string out;
        for (;;) {
            if (pos_ >= text_.size()) error("unterminated string");
            const char c = text_[pos_++];
            if (c == '"') return out;
            if (static_cast<unsigned char>(c) < 0x20) error("control character in a string");
            if (c != '\\') {
                out += c;
                continue;
            }
            if (pos_ >= text_.size()) error("unterminated string");
            switch (const char e = text_[pos_++]) {
            case '"': case '\\': case '/': out += e; break;
            case 'b': out += '\b'; break;
            case 'f': out += '\f'; break;
            case 'n': out += '\n'; break;
            case 'r': out += '\r'; break;
            case 't': out += '\t'; break;
            case 'u': {
                unsigned code = hex4();
                if (code >= 0xd800 && code < 0xdc00) {  // a surrogate pair
                    if (!literal("\\u")) error("lone high surrogate");
                    const unsigned low = hex4();
                    if (low < 0xdc00 || low >= 0xe000) error("bad low surrogate");
                    code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
                } else if (code >= 0xdc00 && code < 0xe000) {
                    error("lone low surrogate");
                }
                append_utf8(out, code);
                break;
            }
            default: error("bad escape");
            }
        }
    }

    static std::string printable(const std::string& s) {
        std::string out;
        for (const char c : s.substr(0, 64)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
        return s.size() > 64 ? out + "..." : out;
    }

    std::string_view text_;
    const std::string& source_;
    size_t pos_ = 0;
    int64_t n_values_ = 0;
    int64_t max_values_;
};

}  // namespace

const JsonValue* JsonValue::find(std::string_view key) const {
    for (const auto& [k, v] : members)
        if (k == key) return &v;
    return nullptr;
}

JsonValue parse_json(std::string_view text, const std::string& source, int64_t max_values) {
    return Parser(text, source, max_values).document();
}

const char* json_kind_name(JsonValue::Kind kind) {
    switch (kind) {
    case JsonValue::Kind::Null: return "null";
    case JsonValue::Kind::Bool: return "a boolean";
    case JsonValue::Kind::Number: return "a number";
    case JsonValue::Kind::String: return "a string";
    case JsonValue::Kind::Array: return "an array";
    case JsonValue::Kind::Object: return "an object";
    }
    return "?";
}

}  // namespace llamadesk
