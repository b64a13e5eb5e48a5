// Turns chat turns into the token ids the model was trained on, one family at a time.
//
// Every family renders a conversation one turn at a time, so that adding a turn never changes an
// earlier turn's tokens (which is what lets the cache be reused). What a template would change
// later is fixed when the conversation is created and kept with it (ARCHITECTURE.md, "Chat
// formats"). As Hugging Face's tokenizer splits at special tokens first, the texts between them
// are encoded on their own; a person's text never becomes a special token.
//
//   Llama 2 (Meta's chat_completion):  <s>[INST] <<SYS>>\n{system}\n<</SYS>>\n\n{user} [/INST]
//                                      {answer} </s><s>[INST] {user} [/INST]
//   Llama 3 (contents trimmed):        <|begin_of_text|>[<|start_header_id|>system<|end_header_id|>\n\n
//                                      {system}<|eot_id|>]<|start_header_id|>user<|end_header_id|>\n\n
//                                      {user}<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n
//                                      {answer}<|eot_id|>
//   Llama 3.1: Llama 3 whose system message always begins "Cutting Knowledge Date: December
//              2023\nToday Date: {date}\n\n", the conversation's own date.
//   Mistral (Nemo's template):         <s>[INST]{system}\n\n{user}[/INST]{answer}</s>[INST]{user}[/INST]
//   ChatML (Hermes 3):                 <s>[<|im_start|>system\n{system}<|im_end|>\n]<|im_start|>user\n
//                                      {user}<|im_end|>\n<|im_start|>assistant\n{answer}<|im_end|>\n
//   Zephyr (TinyLlama Chat):           [<|system|>\n{system}</s>\n]<|user|>\n{user}</s>\n<|assistant|>\n
//                                      {answer}</s>\n
//   DeepSeek-R1 distills:              <s>{system}<｜User｜>{user}<｜Assistant｜><think>\n{answer}</s>
//   Completion: the text itself, BOS first when it starts the conversation.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "chat/chat_format.h"
#include "tokenizer/tokenizer.h"

namespace llamadesk {

// The key chat_formats() gives the format ("chat", "llama3", "completion").
std::string chat_format_key(ChatFormat format);
// The name a person reads ("Llama 3.1 chat").
std::string chat_format_name(ChatFormat format);

// Today as Llama 3.1's header writes a date: "03 Dec 2026" (strftime "%d %b %Y", as Llama 3.2's
// template asks strftime_now for it).
std::string today_date();

// Tokens of a user turn up to where the answer begins. date: Llama31Chat's "Today Date".
std::vector<int> render_user_turn(const Tokenizer& tok, ChatFormat format, bool first_turn,
                                  const std::string& system_prompt, const std::string& user_text,
                                  const std::string& date = {});

// Tokens of a finished answer that was not generated here (restored from disk), end included.
std::vector<int> render_answer(const Tokenizer& tok, ChatFormat format, const std::string& answer);

// Tokens that close an answer in the history (EOS for Llama2Chat, <|eot_id|> for Llama3Chat,
// <|im_end|> and a newline for ChatML, nothing for Completion).
std::vector<int> answer_terminator(const Tokenizer& tok, ChatFormat format);

// A prompt as text, special tokens spelled out: what --print-prompt prints.
std::string prompt_text(const Tokenizer& tok, const std::vector<int>& ids);

// The family a Jinja chat template renders, by the markers that tell them apart (as llama.cpp's
// llm_chat_detect_template does), or nullopt for one LlamaDesk does not render.
std::optional<ChatFormat> chat_format_of_template(const std::string& chat_template);

struct FormatChoice {
    ChatFormat format;
    std::string reason;  // which rule chose it, for the model info ("from its chat template")
    bool guessed = false;  // the checkpoint's template is of no family rendered here
};
// The format a checkpoint was made for. Its chat template decides when there is one; without one,
// a vocabulary with <|eot_id|> means Llama 3, and a name saying chat or instruct (as Meta's and
// most converters' file names do) Llama 2; else Completion. A template of no family rendered here
// still marks a chat model: the vocabulary's rule picks the nearest, and the reason says so.
FormatChoice suggested_chat_format(const std::string& chat_template, const std::string& model_name,
                                   const Tokenizer& tok);

}  // namespace llamadesk
