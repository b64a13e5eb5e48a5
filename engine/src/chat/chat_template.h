// Turns chat turns into the token ids the model was trained on.
//
// Llama 2 chat, as Meta's chat_completion encodes it, one turn at a time so that earlier turns'
// tokens never change when a turn is added (which is what lets the cache be reused):
//   turn 0:  <s>[INST] <<SYS>>\n{system}\n<</SYS>>\n\n{user} [/INST]
//   turn i:  <s>[INST] {user} [/INST]
//   answer:  {answer tokens} </s>
// Llama 3 chat, as its Jinja template renders it (each content trimmed); Llama 3.1 (and 3.2)
// always write the system header, "Cutting Knowledge Date: December 2023\nToday Date: {date}\n\n"
// before the system prompt, with the conversation's own date:
//   turn 0:  <|begin_of_text|>[<|start_header_id|>system<|end_header_id|>\n\n{system}<|eot_id|>]
//   turn i:  <|start_header_id|>user<|end_header_id|>\n\n{user}<|eot_id|>
//            <|start_header_id|>assistant<|end_header_id|>\n\n
//   answer:  {answer tokens}<|eot_id|>
// The text between special tokens is encoded on its own, as Hugging Face's tokenizer splits at
// special tokens first; so no turn's tokens depend on the next one.
// Completion: the text itself, BOS first when it starts the conversation.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "llamadesk/engine.h"
#include "tokenizer/tokenizer.h"

namespace llamadesk {

// The key chat_formats() gives the format ("chat", "llama3", "completion").
std::string chat_format_key(ChatFormat format);

// Today as Llama 3.1's header writes a date: "03 Dec 2026" (strftime "%d %b %Y", as Llama 3.2's
// template asks strftime_now for it).
std::string today_date();

// Tokens of a user turn up to where the answer begins. date: Llama31Chat's "Today Date".
std::vector<int> render_user_turn(const Tokenizer& tok, ChatFormat format, bool first_turn,
                                  const std::string& system_prompt, const std::string& user_text,
                                  const std::string& date = {});

// Tokens of a finished answer that was not generated here (restored from disk), end included.
std::vector<int> render_answer(const Tokenizer& tok, ChatFormat format, const std::string& answer);

// The format a checkpoint was made for. Its chat template decides when there is one (Llama 3.1's
// dated system header, else Llama 3's headers, else Llama 2's [INST]); without one, a vocabulary with <|eot_id|> means Llama 3, and a
// name saying chat or instruct (as Meta's and most converters' file names do) Llama 2; else
// Completion.
ChatFormat suggested_chat_format(const std::string& chat_template, const std::string& model_name,
                                 const Tokenizer& tok);
// The family a Jinja chat template renders, by the markers that tell them apart (as llama.cpp's
// llm_chat_detect_template does), or nullopt for one LlamaDesk does not render.
std::optional<ChatFormat> chat_format_of_template(const std::string& chat_template);

// Tokens that close an answer in the history (EOS for Llama2Chat, <|eot_id|> for Llama3Chat,
// nothing for Completion).
std::vector<int> answer_terminator(const Tokenizer& tok, ChatFormat format);

}  // namespace llamadesk
