#include "chat/chat_template.h"

#include <algorithm>
#include <cctype>
#include <ctime>
#include <string_view>

#include "core/error.h"

namespace llamadesk {

namespace {

// Python's str.strip() for the whitespace a chat message can hold.
std::string strip(std::string_view s) {
    constexpr std::string_view ws = " \t\n\r\v\f";
    const size_t begin = s.find_first_not_of(ws);
    if (begin == std::string_view::npos) return {};
    const size_t end = s.find_last_not_of(ws);
    return std::string(s.substr(begin, end - begin + 1));
}

void append(std::vector<int>& ids, const std::vector<int>& more) {
    ids.insert(ids.end(), more.begin(), more.end());
}

// A prompt built from texts and special tokens, as a template writes it. Texts are gathered up to
// the next special token and encoded together; only a conversation's very first text gets
// SentencePiece's dummy-prefix space.
class Prompt {
public:
    Prompt(const Tokenizer& tok, const char* family, bool at_start) : tok_(tok), family_(family), at_start_(at_start) {}

    Prompt& bos() {
        if (tok_.bos_id() >= 0) push(tok_.bos_id());
        return *this;
    }
    Prompt& eos() {
        push(tok_.eos_id());
        return *this;
    }
    Prompt& text(std::string_view t) {
        pending_ += t;
        return *this;
    }
    // A special token the family cannot do without (its headers, the end of its answers).
    Prompt& special(std::string_view name) {
        const int id = tok_.special_id(name);
        if (id < 0)
            fail(ErrorCode::InvalidArgument, std::string("the ") + family_ + " format needs the token " +
                                                 std::string(name) +
                                                 ", which this model's vocabulary lacks; choose another format");
        push(id);
        return *this;
    }
    // A special token where the vocabulary has one, else its text (Mistral's [INST] before v3).
    Prompt& marker(std::string_view name) {
        const int id = tok_.special_id(name);
        return id >= 0 ? (push(id), *this) : text(name);
    }
    std::vector<int> take() {
        flush();
        return std::move(ids_);
    }

private:
    void push(int id) {
        flush();
        ids_.push_back(id);
    }
    void flush() {
        if (pending_.empty()) return;
        append(ids_, at_start_ ? tok_.encode(pending_, false) : tok_.encode_continuation(pending_));
        at_start_ = false;
        pending_.clear();
    }

    const Tokenizer& tok_;
    const char* family_;
    bool at_start_;
    std::string pending_;
    std::vector<int> ids_;
};

// What a family's renderers are given for one user turn.
struct UserTurn {
    bool first;
    std::string_view system, user, date;
};

// One row per family: how it writes a user turn up to the answer, and how it closes an answer.
// A finished answer is answer_text(answer), then close(). texts_stand_alone: every turn and answer
// is encoded as a text of its own, dummy prefix included (Meta's Llama 2 reference, and plain
// completion as it always has); else text continues the prompt.
struct Family {
    ChatFormatName name;
    bool texts_stand_alone;
    void (*user_turn)(Prompt&, const UserTurn&);
    std::string (*answer_text)(std::string_view answer);
    void (*close)(Prompt&);
};

std::string as_written(std::string_view s) { return std::string(s); }

// Meta's llama/generation.py: each turn is "[INST] {user} [/INST]" with BOS, the system message
// merged into the first user message, then stripped; "{answer} " closes with EOS.
void llama2_turn(Prompt& p, const UserTurn& t) {
    std::string content(t.user);
    if (t.first && !t.system.empty()) content = "<<SYS>>\n" + std::string(t.system) + "\n<</SYS>>\n\n" + content;
    p.bos().text("[INST] " + strip(content) + " [/INST]");
}
// SentencePiece splits at whitespace, so the part after "[/INST]" is what the dummy-prefixed
// answer encodes to, trailing space included.
std::string llama2_answer(std::string_view a) { return strip(a) + " "; }

void llama3_message(Prompt& p, std::string_view role, const std::string& content) {
    p.special("<|start_header_id|>").text(role).special("<|end_header_id|>").text("\n\n" + content);
}
void llama3_generation_prompt(Prompt& p, const UserTurn& t) {
    llama3_message(p, "user", strip(t.user));
    p.special("<|eot_id|>");
    llama3_message(p, "assistant", "");
}
void llama3_turn(Prompt& p, const UserTurn& t) {
    if (t.first) {
        p.bos();
        if (!t.system.empty()) {
            llama3_message(p, "system", strip(t.system));
            p.special("<|eot_id|>");
        }
    }
    llama3_generation_prompt(p, t);
}
void llama31_turn(Prompt& p, const UserTurn& t) {
    if (t.first) {
        if (t.date.empty()) fail(ErrorCode::Internal, "a Llama 3.1 conversation has no date");
        p.bos();
        llama3_message(p, "system", "Cutting Knowledge Date: December 2023\nToday Date: " + std::string(t.date) +
                                        "\n\n" + strip(t.system));
        p.special("<|eot_id|>");
    }
    llama3_generation_prompt(p, t);
}
void close_llama3(Prompt& p) { p.special("<|eot_id|>"); }
std::string stripped(std::string_view a) { return strip(a); }

// Nemo's template puts the system message into the last user message, which would change an
// earlier turn whenever one is added; here it stays in the first, where a one-turn conversation
// has it too.
void mistral_turn(Prompt& p, const UserTurn& t) {
    if (t.first) p.bos();
    p.marker("[INST]");
    if (t.first && !t.system.empty()) p.text(std::string(t.system) + "\n\n");
    p.text(t.user).marker("[/INST]");
}
void close_eos(Prompt& p) { p.eos(); }

void chatml_message(Prompt& p, std::string_view role, std::string_view content) {
    p.special("<|im_start|>").text(std::string(role) + "\n" + std::string(content)).special("<|im_end|>").text("\n");
}
void chatml_turn(Prompt& p, const UserTurn& t) {
    if (t.first) {
        p.bos();
        if (!t.system.empty()) chatml_message(p, "system", t.system);
    }
    chatml_message(p, "user", t.user);
    p.special("<|im_start|>").text("assistant\n");
}
void close_chatml(Prompt& p) { p.special("<|im_end|>").text("\n"); }

// Zephyr's roles are plain text; its template writes no BOS.
void zephyr_turn(Prompt& p, const UserTurn& t) {
    if (t.first && !t.system.empty()) p.text("<|system|>\n" + std::string(t.system)).eos().text("\n");
    p.text("<|user|>\n" + std::string(t.user)).eos().text("\n<|assistant|>\n");
}
void close_zephyr(Prompt& p) { p.eos().text("\n"); }

// The template drops an earlier answer's <think>…</think> from the history, which would change
// the tokens already cached; here an answer stays as it was generated, reasoning included.
void deepseek_turn(Prompt& p, const UserTurn& t) {
    if (t.first) p.bos().text(t.system);
    p.special("<｜User｜>").text(t.user).special("<｜Assistant｜>").marker("<think>").text("\n");
}

void completion_turn(Prompt& p, const UserTurn& t) {
    if (t.first) p.bos();
    p.text(t.user);
}
void close_nothing(Prompt&) {}

const std::vector<Family>& families() {
    static const std::vector<Family> table = {
        {{ChatFormat::Llama31Chat, "llama3.1", "Llama 3.1 chat"}, false, llama31_turn, stripped, close_llama3},
        {{ChatFormat::Llama3Chat, "llama3", "Llama 3 chat"}, false, llama3_turn, stripped, close_llama3},
        {{ChatFormat::Llama2Chat, "chat", "Llama 2 chat"}, true, llama2_turn, llama2_answer, close_eos},
        {{ChatFormat::Mistral, "mistral", "Mistral instruct"}, false, mistral_turn, as_written, close_eos},
        {{ChatFormat::ChatML, "chatml", "ChatML (Hermes)"}, false, chatml_turn, as_written, close_chatml},
        {{ChatFormat::Zephyr, "zephyr", "Zephyr (TinyLlama)"}, false, zephyr_turn, as_written, close_zephyr},
        {{ChatFormat::DeepSeekR1, "deepseek-r1", "DeepSeek-R1 distill"}, false, deepseek_turn, as_written, close_eos},
        {{ChatFormat::Completion, "completion", "Plain completion"}, true, completion_turn, as_written, close_nothing},
    };
    return table;
}

const Family& family(ChatFormat format) {
    for (const Family& f : families())
        if (f.name.format == format) return f;
    fail(ErrorCode::InvalidArgument, "chat format " + std::to_string(int(format)) + " does not exist");
}

}  // namespace

const std::vector<ChatFormatName>& chat_formats() {
    static const std::vector<ChatFormatName> names = [] {
        std::vector<ChatFormatName> v;
        for (const Family& f : families()) v.push_back(f.name);
        return v;
    }();
    return names;
}

std::string chat_format_key(ChatFormat format) { return family(format).name.key; }
std::string chat_format_name(ChatFormat format) { return family(format).name.name; }

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
    const Family& f = family(format);
    Prompt p(tok, f.name.name, first_turn || f.texts_stand_alone);
    f.user_turn(p, UserTurn{first_turn, system_prompt, user_text, date});
    return p.take();
}

std::vector<int> render_answer(const Tokenizer& tok, ChatFormat format, const std::string& answer) {
    const Family& f = family(format);
    Prompt p(tok, f.name.name, f.texts_stand_alone);
    p.text(f.answer_text(answer));
    f.close(p);
    return p.take();
}

std::vector<int> answer_terminator(const Tokenizer& tok, ChatFormat format) {
    const Family& f = family(format);
    Prompt p(tok, f.name.name, false);
    f.close(p);
    return p.take();
}

std::string prompt_text(const Tokenizer& tok, const std::vector<int>& ids) {
    std::string text;
    for (size_t k = 0; k < ids.size(); ++k) {
        const int id = ids[k];
        text += tok.special_id(tok.piece(id)) == id ? tok.piece(id) : tok.token_bytes(k ? ids[k - 1] : -1, id);
    }
    return text;
}

std::optional<ChatFormat> chat_format_of_template(const std::string& t) {
    auto has = [&](std::string_view marker) { return t.find(marker) != std::string::npos; };
    if (has("<|im_start|>")) return ChatFormat::ChatML;
    if (has("<｜User｜>") && has("<｜Assistant｜>")) return ChatFormat::DeepSeekR1;
    if (has("Cutting Knowledge Date")) return ChatFormat::Llama31Chat;
    if (has("<|start_header_id|>")) return ChatFormat::Llama3Chat;
    if (has("[INST]")) return has("<<SYS>>") ? ChatFormat::Llama2Chat : ChatFormat::Mistral;
    // Phi-3 writes <|user|> and <|assistant|> too, but ends its turns with <|end|>.
    if (has("<|user|>") && has("<|assistant|>") && !has("<|end|>")) return ChatFormat::Zephyr;
    return std::nullopt;
}

FormatChoice suggested_chat_format(const std::string& chat_template, const std::string& model_name,
                                   const Tokenizer& tok) {
    if (const auto family = chat_format_of_template(chat_template)) return {*family, "from its chat template"};
    const bool llama3_vocab = tok.special_id("<|eot_id|>") >= 0 && tok.special_id("<|start_header_id|>") >= 0;
    if (!chat_template.empty()) {
        const ChatFormat nearest = llama3_vocab ? ChatFormat::Llama3Chat : ChatFormat::Llama2Chat;
        return {nearest, "its chat template is of no family LlamaDesk renders, so " + chat_format_name(nearest) +
                             " is a guess: pick the model's family in the format selector",
                true};
    }
    if (llama3_vocab) return {ChatFormat::Llama3Chat, "no chat template; its vocabulary has <|eot_id|>"};
    std::string name = model_name;
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    for (const std::string_view word : {"chat", "instruct"})
        if (name.find(word) != std::string::npos)
            return {ChatFormat::Llama2Chat, "no chat template; its name says " + std::string(word)};
    return {ChatFormat::Completion, "no chat template and no chat tokens: a base model continues text"};
}

}  // namespace llamadesk
