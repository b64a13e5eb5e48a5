#include "print_prompt.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include "chat/chat_template.h"
#include "core/error.h"
#include "readers/json.h"
#include "tokenizer/tokenizer.h"

namespace llamadesk::cli {
namespace {

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) fail(ErrorCode::FileNotFound, "cannot open " + path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::string family_keys() {
    std::string keys;
    for (const ChatFormatName& f : chat_formats()) keys += (keys.empty() ? "" : ", ") + std::string(f.key);
    return keys;
}

// --chat-template: a family's key, or a Jinja file whose family is detected; else the checkpoint's.
ChatFormat chosen_format(const Options& o, const Checkpoint& ckpt, const Tokenizer& tok) {
    for (const ChatFormatName& f : chat_formats())
        if (o.chat_template == f.key) return f.format;
    if (o.chat_template.empty()) return suggested_chat_format(ckpt.chat_template, ckpt.name, tok).format;
    if (const auto family = chat_format_of_template(read_file(o.chat_template))) return *family;
    fail(ErrorCode::Unsupported, "the chat template " + o.chat_template +
                                     " is of none of the families LlamaDesk renders; pass one of " +
                                     family_keys() + " as --chat-template");
}

struct Message {
    std::string role, content;
};

std::vector<Message> read_messages(const std::string& path) {
    const JsonValue root = parse_json(read_file(path), path);
    if (!root.is_array()) fail(ErrorCode::InvalidArgument, path + " is not a JSON list of messages");
    std::vector<Message> messages;
    for (const JsonValue& m : root.items) {
        const JsonValue* role = m.find("role");
        const JsonValue* content = m.find("content");
        if (!role || role->kind != JsonValue::Kind::String || !content || content->kind != JsonValue::Kind::String)
            fail(ErrorCode::InvalidArgument, path + ": message " + std::to_string(messages.size()) +
                                                 " needs a string \"role\" and \"content\"");
        const std::string& r = role->string;
        if (r != "user" && r != "assistant" && r != "system")
            fail(ErrorCode::InvalidArgument, path + ": message " + std::to_string(messages.size()) + " has the role \"" +
                                                 r + "\"; the roles are \"system\" (first only), \"user\" and \"assistant\"");
        messages.push_back({r, content->string});
    }
    return messages;
}

}  // namespace

void run_print_prompt(const Options& o) {
    const Checkpoint ckpt = open_checkpoint(o.load.model_path, o.load.tokenizer_path);
    const auto tok = Tokenizer::from_source(ckpt.tokenizer);
    const ChatFormat format = chosen_format(o, ckpt, *tok);
    const std::vector<Message> messages = read_messages(o.messages_file);

    // [system] then user, assistant, ..., user: each user message opens a turn.
    size_t i = 0;
    std::string system;
    if (!messages.empty() && messages[0].role == "system") system = messages[i++].content;
    const std::string date = o.date.empty() ? today_date() : o.date;
    std::vector<int> ids;
    for (bool first = true; i < messages.size(); first = false) {
        if (messages[i].role != "user")
            fail(ErrorCode::InvalidArgument, o.messages_file + ": message " + std::to_string(i) + " is the " +
                                                 messages[i].role + "'s; a turn begins with the user's");
        const std::vector<int> turn = render_user_turn(*tok, format, first, system, messages[i++].content, date);
        ids.insert(ids.end(), turn.begin(), turn.end());
        if (i == messages.size()) break;
        if (messages[i].role != "assistant")
            fail(ErrorCode::InvalidArgument, o.messages_file + ": message " + std::to_string(i) +
                                                 " follows the user's and is not the assistant's");
        const std::vector<int> answer = render_answer(*tok, format, messages[i++].content);
        ids.insert(ids.end(), answer.begin(), answer.end());
        if (i == messages.size())
            fail(ErrorCode::InvalidArgument, o.messages_file + " ends with the assistant's message; the prompt "
                                                               "asks for the next answer, so it ends with the user's");
    }
    const std::string text = prompt_text(*tok, ids);
    std::fwrite(text.data(), 1, text.size(), stdout);
}

}  // namespace llamadesk::cli
