#include "tokenizer/tiktoken_model.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <tuple>
#include <unordered_map>

#include "core/error.h"
#include "tokenizer/byte_level.h"

namespace llamadesk {
namespace {

constexpr int kSpecialTokens = 256;
constexpr size_t kMaxTokens = 1 << 22;

int base64_value(char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

// Standard base64 with padding, as tiktoken writes it.
std::optional<std::string> base64_decode(std::string_view s) {
    if (s.empty() || s.size() % 4 != 0) return std::nullopt;
    std::string out;
    for (size_t i = 0; i < s.size(); i += 4) {
        int v[4];
        int pad = 0;
        for (int j = 0; j < 4; ++j) {
            const char c = s[i + size_t(j)];
            if (c == '=' && i + 4 == s.size() && j >= 2) {
                v[j] = 0;
                ++pad;
            } else if (pad > 0 || (v[j] = base64_value(c)) < 0) {
                return std::nullopt;
            }
        }
        const uint32_t bits = uint32_t(v[0] << 18 | v[1] << 12 | v[2] << 6 | v[3]);
        out.push_back(char(bits >> 16));
        if (pad < 2) out.push_back(char(bits >> 8 & 0xFF));
        if (pad < 1) out.push_back(char(bits & 0xFF));
    }
    return out;
}

std::optional<std::pair<std::string_view, std::string_view>> split_line(std::string_view line) {
    const size_t space = line.find(' ');
    if (space == std::string_view::npos || line.find(' ', space + 1) != std::string_view::npos)
        return std::nullopt;
    return std::pair{line.substr(0, space), line.substr(space + 1)};
}

// Meta's tokenizer.py: these first, then <|reserved_special_token_N|> for the rest.
std::vector<std::string> special_tokens() {
    std::vector<std::string> names = {
        "<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>",
        "<|reserved_special_token_1|>", "<|finetune_right_pad_id|>", "<|step_id|>",
        "<|start_header_id|>", "<|end_header_id|>", "<|eom_id|>", "<|eot_id|>", "<|python_tag|>",
        "<|image|>"};
    for (int i = 2; names.size() < size_t(kSpecialTokens); ++i)
        names.push_back("<|reserved_special_token_" + std::to_string(i) + "|>");
    return names;
}

}  // namespace

bool looks_like_tiktoken(std::string_view bytes) {
    const std::string_view line = bytes.substr(0, bytes.find('\n'));
    const auto parts = split_line(line);
    if (!parts || parts->first.empty() || parts->second.empty()) return false;
    return std::all_of(parts->first.begin(), parts->first.end(),
                       [](char c) { return base64_value(c) >= 0 || c == '='; }) &&
           std::all_of(parts->second.begin(), parts->second.end(),
                       [](char c) { return c >= '0' && c <= '9'; });
}

EmbeddedVocab read_tiktoken_model(std::string_view bytes, const std::string& path) {
    std::vector<std::optional<std::string>> by_rank;
    std::unordered_map<std::string, int32_t> rank_of;
    size_t line_no = 0;
    for (size_t pos = 0; pos < bytes.size();) {
        size_t end = bytes.find('\n', pos);
        if (end == std::string_view::npos) end = bytes.size();
        std::string_view line = bytes.substr(pos, end - pos);
        pos = end + 1;
        ++line_no;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.empty()) continue;
        const std::string where = path + ": line " + std::to_string(line_no);
        const auto parts = split_line(line);
        if (!parts)
            fail(ErrorCode::BadFormat, where + " is not a base64 token and a rank separated by one space");
        const std::optional<std::string> token = base64_decode(parts->first);
        if (!token)
            fail(ErrorCode::BadFormat, where + ": '" + std::string(parts->first.substr(0, 64)) +
                                           "' does not decode as base64");
        uint64_t rank = 0;
        const auto [ptr, ec] = std::from_chars(parts->second.data(),
                                               parts->second.data() + parts->second.size(), rank);
        if (ec != std::errc() || ptr != parts->second.data() + parts->second.size() || rank >= kMaxTokens)
            fail(ErrorCode::BadFormat, where + ": rank '" + std::string(parts->second.substr(0, 32)) +
                                           "' is not a number below " + std::to_string(kMaxTokens));
        if (rank >= by_rank.size()) by_rank.resize(size_t(rank) + 1);
        if (by_rank[size_t(rank)])
            fail(ErrorCode::BadFormat, where + ": rank " + std::to_string(rank) +
                                           " is given twice (ranks are unique)");
        if (!rank_of.emplace(*token, int32_t(rank)).second)
            fail(ErrorCode::BadFormat, where + ": the token of rank " + std::to_string(rank) +
                                           " repeats the token of rank " +
                                           std::to_string(rank_of[*token]));
        by_rank[size_t(rank)] = *token;
    }
    if (by_rank.empty()) fail(ErrorCode::BadFormat, path + " holds no tokens");
    for (size_t rank = 0; rank < by_rank.size(); ++rank)
        if (!by_rank[rank])
            fail(ErrorCode::BadFormat, path + ": rank " + std::to_string(rank) + " is missing (the " +
                                           std::to_string(rank_of.size()) + " ranks must run 0 to " +
                                           std::to_string(rank_of.size() - 1) + ")");

    EmbeddedVocab v;
    v.model = "gpt2";
    v.pre = "llama-bpe";
    const int32_t n = int32_t(by_rank.size());
    for (const auto& token : by_rank) {
        v.tokens.push_back(bytes_to_byte_level(*token));
        v.token_types.push_back(1);
    }
    std::vector<std::tuple<int32_t, int32_t, int32_t>> merges;  // (merged, left, right) ranks
    for (int32_t rank = 0; rank < n; ++rank) {
        const std::string& token = *by_rank[size_t(rank)];
        for (size_t cut = 1; cut < token.size(); ++cut) {
            const auto left = rank_of.find(token.substr(0, cut));
            const auto right = rank_of.find(token.substr(cut));
            if (left != rank_of.end() && right != rank_of.end() && left->second < rank &&
                right->second < rank)
                merges.emplace_back(rank, left->second, right->second);
        }
    }
    std::sort(merges.begin(), merges.end());
    v.merges.reserve(merges.size());
    for (const auto& [merged, left, right] : merges)
        v.merges.push_back(v.tokens[size_t(left)] + " " + v.tokens[size_t(right)]);
    for (const std::string& name : special_tokens()) {
        v.tokens.push_back(name);
        v.token_types.push_back(3);
    }
    v.bos_id = n;       // <|begin_of_text|>
    v.eos_id = n + 1;   // <|end_of_text|>
    v.eog_ids = {n + 8, n + 9};  // <|eom_id|>, <|eot_id|>
    v.unk_id = -1;
    return v;
}

}  // namespace llamadesk
