// The chat formats the engine renders (chat/chat_template.cpp holds their traits table).
#pragma once

#include <vector>

namespace llamadesk {

enum class ChatFormat {
    Llama2Chat,  // <s>[INST] <<SYS>>\n...\n<</SYS>>\n\n user [/INST] answer </s><s>[INST] ...
    Completion,  // plain text continuation
    Llama3Chat,  // <|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\n user<|eot_id|>...
    Llama31Chat, // Llama3Chat with 3.1's system header: "Cutting Knowledge Date" and "Today Date"
    Mistral,     // <s>[INST]{system}\n\n{user}[/INST]{answer}</s>[INST]{user}[/INST]
    ChatML,      // <|im_start|>{role}\n{content}<|im_end|>\n, as Hermes 3 writes it
    Zephyr,      // <|user|>\n{user}</s>\n<|assistant|>\n, as TinyLlama Chat writes it
    DeepSeekR1,  // <｜begin▁of▁sentence｜>{system}<｜User｜>{user}<｜Assistant｜><think>\n
};

// Every chat format in the order a selector lists them: its key (as conversations are saved and
// the CLI names it) and the name a person reads.
struct ChatFormatName {
    ChatFormat format;
    const char* key;
    const char* name;
};
const std::vector<ChatFormatName>& chat_formats();

}  // namespace llamadesk
