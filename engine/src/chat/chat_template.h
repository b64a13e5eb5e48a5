// Turns chat turns into the token ids the model was trained on.
//
// Llama 2 chat, as Meta's chat_completion encodes it, one turn at a time so that earlier turns'
// tokens never change when a turn is added (which is what lets the cache be reused):
//   turn 0:  <s>[INST] <<SYS>>\n{system}\n<</SYS>>\n\n{user} [/INST]
//   turn i:  <s>[INST] {user} [/INST]
//   answer:  {answer tokens} </s>
// Completion: the text itself, BOS first when it starts the conversation.
#pragma once

#include <string>
#include <vector>

#include "llamadesk/engine.h"
#include "tokenizer/tokenizer.h"

namespace llamadesk {

// Tokens of a user turn up to where the answer begins.
std::vector<int> render_user_turn(const Tokenizer& tok, ChatFormat format, bool first_turn,
                                  const std::string& system_prompt, const std::string& user_text);

// Tokens of a finished answer that was not generated here (restored from disk), end included.
std::vector<int> render_answer(const Tokenizer& tok, ChatFormat format, const std::string& answer);

// The format a checkpoint was made for: Llama2Chat when it carries a chat template or its name
// says chat or instruct (as Meta's and most converters' file names do), else Completion.
ChatFormat suggested_chat_format(const std::string& chat_template, const std::string& model_name);

// Tokens that close an answer in the history (EOS for Llama2Chat, nothing for Completion).
std::vector<int> answer_terminator(const Tokenizer& tok, ChatFormat format);

}  // namespace llamadesk
