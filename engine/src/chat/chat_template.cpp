#include "chat/chat_template.h"

#include <algorithm>
#include <cctype>
#include <string_view>

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

}  // namespace

std::vector<int> render_user_turn(const Tokenizer& tok, ChatFormat format, bool first_turn,
                                  const std::string& system_prompt, const std::string& user_text) {
    if (format == ChatFormat::Completion) return tok.encode(user_text, first_turn);

    // The reference merges the system message into the first user message, then strips it.
    std::string content = user_text;
    if (first_turn && !system_prompt.empty())
        content = std::string(B_SYS) + system_prompt + std::string(E_SYS) + user_text;
    const std::string text = std::string(B_INST) + " " + strip(content) + " " + std::string(E_INST);
    return tok.encode(text, /*add_bos=*/true);
}

std::vector<int> render_answer(const Tokenizer& tok, ChatFormat format, const std::string& answer) {
    if (format == ChatFormat::Completion) return tok.encode(answer, false);

    // The reference encodes "[INST] {user} [/INST] {answer} " with EOS. SentencePiece splits at
    // whitespace, so the part after "[/INST]" is what the dummy-prefixed answer encodes to,
    // trailing space included.
    std::vector<int> ids = tok.encode(strip(answer) + " ", false);
    ids.push_back(tok.eos_id());
    return ids;
}

ChatFormat suggested_chat_format(const std::string& chat_template, const std::string& model_name) {
    if (!chat_template.empty()) return ChatFormat::Llama2Chat;
    std::string name = model_name;
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    for (const std::string_view word : {"chat", "instruct"})
        if (name.find(word) != std::string::npos) return ChatFormat::Llama2Chat;
    return ChatFormat::Completion;
}

std::vector<int> answer_terminator(const Tokenizer& tok, ChatFormat format) {
    if (format == ChatFormat::Completion) return {};
    return {tok.eos_id()};
}

}  // namespace llamadesk
