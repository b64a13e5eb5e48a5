// What the engine's tools share in reading their options: the loop of the tools whose every option
// takes a value ("--name value", -h/--help prints the usage), numbers and lists of them, --dtype's
// WeightMix and --kv-type's cache type.
#pragma once

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "llamadesk/engine.h"
#include "model/weight_mix.h"

namespace llamadesk::tools {

// Calls take(option, value) for each pair; take returns false for an option it does not know.
// Returns false when the usage was printed for -h/--help (the program then ends), true otherwise.
template <class Take>
bool read_options(int argc, char** argv, const char* usage, Take take) {
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "-h" || arg == "--help") {
            std::printf("%s", usage);
            return false;
        }
        if (i + 1 >= argc) fail(ErrorCode::InvalidArgument, arg + " expects a value (see --help)");
        const std::string value = argv[++i];
        if (!take(arg, value)) fail(ErrorCode::InvalidArgument, "unknown option " + arg + " (see --help)");
    }
    return true;
}

inline int parse_int(const std::string& option, const std::string& value) {
    int out = 0;
    const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), out);
    if (ec != std::errc() || ptr != value.data() + value.size() || value.empty())
        fail(ErrorCode::InvalidArgument, option + " expects a number, not '" + value + "'");
    return out;
}

// "a,b,c" as {"a", "b", "c"}.
inline std::vector<std::string> split_list(const std::string& value) {
    std::vector<std::string> out;
    for (size_t at = 0; at <= value.size();) {
        const size_t comma = std::min(value.find(',', at), value.size());
        out.push_back(value.substr(at, comma - at));
        at = comma + 1;
    }
    return out;
}

// "1,256" as {1, 256}: positive numbers, comma-separated.
inline std::vector<int> parse_int_list(const std::string& option, const std::string& value) {
    std::vector<int> out;
    for (const std::string& item : split_list(value)) {
        out.push_back(parse_int(option, item));
        if (out.back() < 1) fail(ErrorCode::InvalidArgument, option + " expects positive numbers, not '" + value + "'");
    }
    return out;
}

inline KvCacheType parse_kv_type(const std::string& option, const std::string& value) {
    KvCacheType type;
    if (!parse_kv_cache_type(value, &type))
        fail(ErrorCode::InvalidArgument, option + " expects f16, f32 or q8_0, not '" + value + "'");
    return type;
}

inline WeightMix parse_mix(const std::string& value) {
    const std::optional<WeightMix> parsed = WeightMix::parse(value);
    if (!parsed)
        fail(ErrorCode::InvalidArgument, "--dtype expects one of " + WeightMix::names() + ", not '" + value + "'");
    return *parsed;
}

}  // namespace llamadesk::tools
