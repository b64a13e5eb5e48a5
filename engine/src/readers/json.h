// JSON for untrusted headers and configs (safetensors headers, config.json, params.json). Nesting
// depth and the number of values are limited, duplicate keys are refused, and every failure is an EngineError(BadFormat)
// naming the source and the byte offset. Nothing here allocates more than a small multiple of the
// text's size.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace llamadesk {

struct JsonMember;

struct JsonValue {
    enum class Kind { Null, Bool, Number, String, Array, Object };

    Kind kind = Kind::Null;
    bool boolean = false;
    double number = 0.0;
    std::optional<int64_t> integer;  // a number written without fraction or exponent that fits
    std::string string;
    std::vector<JsonValue> items;                            // Array
    std::vector<JsonMember> members;  // Object, in the text's order

    bool is_object() const { return kind == Kind::Object; }
    bool is_array() const { return kind == Kind::Array; }
    // The member named key of an object, or nullptr (also for non-objects).
    const JsonValue* find(std::string_view key) const;
};

// A vector of an incomplete type is fine; a std::pair of one is not (clang with libstdc++).
struct JsonMember {
    std::string key;
    JsonValue value;
};

inline constexpr int kMaxJsonDepth = 64;
// Values in one text: a 405B model's safetensors header holds about ten thousand; the cap keeps a
// hostile "[0,0,0,..." from costing a hundred times its size.
inline constexpr int64_t kMaxJsonValues = int64_t(1) << 20;

// The one JSON value that makes up text (whitespace around it allowed). source names the text in
// messages, e.g. "model.safetensors (header)". max_values: more for a text known to be large
// (a tokenizer.json lists every token and merge).
JsonValue parse_json(std::string_view text, const std::string& source, int64_t max_values = kMaxJsonValues);

// A kind's name for messages: "a string", "an object".
const char* json_kind_name(JsonValue::Kind kind);

}  // namespace llamadesk
