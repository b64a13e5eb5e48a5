#include "chat/chat_template.h"

#include <algorithm>
#include <cctype>
#include <ctime>
#include <string_view>

#include "core/error.h"

namespace llamadesk {

namespace {

// The markers of Meta's llama/generation.py.
constexpr std::string_view B_INST = "[INST]";
constexpr std::string_view E_INST = "[/INST]";
constexpr std::string_view B_SYS = "<<SYS>>\n";
constexpr std::string_view E_SYS = "\n<</SYS>>\n\n";

// Python's str.strip() for the whitespace a chat message can hold.
std::string strip(std::string_view s) {
    constexpr std::string_view ws = " \t\n\r\v\f";
    const size_t begin = s.find_first_not_of(ws);
    if (begin == std::string_view::npos) return {};
    const size_t end = s.find_last_not_of(ws);
    return std::string(s.substr(begin, end - begin + 1));
}

// The id of a special token the format needs; a vocabulary without it cannot be chatted with so.
int required_special(const Tokenizer& tok, std::string_view text) {
    const int id = tok.special_id(text);
    if (id < 0)
        fail(ErrorCode::InvalidArgument, "the Llama 3 chat format needs the token " +
                                             std::string(text) +
                                             ", which this model's vocabulary lacks; choose "
                                             "another format");
    return id;
}

void append(std::vector<int>& ids, const std::vector<int>& more) {
    ids.insert(ids.end(), more.begin(), more.end());
}

// <|start_header_id|>{role}<|end_header_id|>\n\n{content}, content already trimmed.
void llama3_message(const Tokenizer& tok, std::vector<int>& ids, std::string_view role,
                    const std::string& content) {
    ids.push_back(required_special(tok, "<|start_header_id|>"));
    append(ids, tok.encode(role, false));
    ids.push_back(required_special(tok, "<|end_header_id|>"));
    append(ids, tok.encode("\n\n" + content, false));
}

std::vector<int> llama3_user_turn(const Tokenizer& tok, bool first_turn, bool dated,
                                  const std::string& system_prompt, const std::string& user_text,
                                  const std::string& date) {
    const int eot = required_special(tok, "<|eot_id|>");
    std::vector<int> ids;
    if (first_turn) {
        ids.push_back(tok.bos_id());
        if (dated) {
            if (date.empty()) fail(ErrorCode::Internal, "a Llama 3.1 conversation has no date");
            llama3_message(tok, ids, "system",
                           "Cutting Knowledge Date: December 2023\nToday Date: " + date + "\n\n" +
                               strip(system_prompt));
            ids.push_back(eot);
        } else if (!system_prompt.empty()) {
            llama3_message(tok, ids, "system", strip(system_prompt));
            ids.push_back(eot);
        }
    }
    llama3_message(tok, ids, "user", strip(user_text));
    ids.push_back(eot);
    llama3_message(tok, ids, "assistant", "");
    return ids;
}

}  // namespace

const std::vector<ChatFormatName>& chat_formats() {
    static const std::vector<ChatFormatName> formats = {
        {ChatFormat::Llama31Chat, "llama3.1", "Llama 3.1 chat"},
        {ChatFormat::Llama3Chat, "llama3", "Llama 3 chat"},
        {ChatFormat::Llama2Chat, "chat", "Llama 2 chat"},
        {ChatFormat::Completion, "completion", "Plain completion"},
    };
    return formats;
}

std::string chat_format_key(ChatFormat format) {
    for (const ChatFormatName& f : chat_formats())
        if (f.format == format) return f.key;
    fail(ErrorCode::InvalidArgument, "chat format " + std::to_string(int(format)) + " does not exist");
}

std::string today_date() {
    const std::time_t now = std::time(nullptr);
    std::tm local{};
    localtime_r(&now, &local);
    char text[32];
    std::strftime(text, sizeof text, "%d %b %Y", &local);
    return text;
}

std::vector<int> render_user_turn(const Tokenizer& tok, ChatFormat format, bool first_turn,
                                  const std::string& system_prompt, const std::string& user_text,
                                  const std::string& date) {
    if (format == ChatFormat::Completion) return tok.encode(user_text, first_turn);
    if (format == ChatFormat::Llama3Chat || format == ChatFormat::Llama31Chat)
        return llama3_user_turn(tok, first_turn, format == ChatFormat::Llama31Chat, system_prompt,
                                user_text, date);

    // The reference merges the system message into the first user message, then strips it.
    std::string content = user_text;
    if (first_turn && !system_prompt.empty())
        content = std::string(B_SYS) + system_prompt + std::string(E_SYS) + user_text;
    const std::string text = std::string(B_INST) + " " + strip(content) + " " + std::string(E_INST);
    return tok.encode(text, /*add_bos=*/true);
}

std::vector<int> render_answer(const Tokenizer& tok, ChatFormat format, const std::string& answer) {
    if (format == ChatFormat::Completion) return tok.encode(answer, false);
    if (format == ChatFormat::Llama3Chat || format == ChatFormat::Llama31Chat) {
        std::vector<int> ids = tok.encode(strip(answer), false);
        ids.push_back(required_special(tok, "<|eot_id|>"));
        return ids;
    }

    // The reference encodes "[INST] {user} [/INST] {answer} " with EOS. SentencePiece splits at
    // whitespace, so the part after "[/INST]" is what the dummy-prefixed answer encodes to,
    // trailing space included.
    std::vector<int> ids = tok.encode(strip(answer) + " ", false);
    ids.push_back(tok.eos_id());
    return ids;
}

std::optional<ChatFormat> chat_format_of_template(const std::string& t) {
    auto has = [&](std::string_view marker) { return t.find(marker) != std::string::npos; };
    if (has("Cutting Knowledge Date")) return ChatFormat::Llama31Chat;
    if (has("<|start_header_id|>")) return ChatFormat::Llama3Chat;
    if (has("[INST]") && has("<<SYS>>")) return ChatFormat::Llama2Chat;
    return std::nullopt;
}

ChatFormat suggested_chat_format(const std::string& chat_template, const std::string& model_name,
                                 const Tokenizer& tok) {
    if (const auto family = chat_format_of_template(chat_template)) return *family;
    // A template of another family still marks a chat model; Llama 2's is the nearest we render.
    if (!chat_template.empty()) return ChatFormat::Llama2Chat;
    if (tok.special_id("<|eot_id|>") >= 0 && tok.special_id("<|start_header_id|>") >= 0)
        return ChatFormat::Llama3Chat;
    std::string name = model_name;
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    for (const std::string_view word : {"chat", "instruct"})
        if (name.find(word) != std::string::npos) return ChatFormat::Llama2Chat;
    return ChatFormat::Completion;
}

std::vector<int> answer_terminator(const Tokenizer& tok, ChatFormat format) {
    if (format == ChatFormat::Completion) return {};
    if (format == ChatFormat::Llama3Chat || format == ChatFormat::Llama31Chat)
        return {required_special(tok, "<|eot_id|>")};
    return {tok.eos_id()};
}

}  // namespace llamadesk
