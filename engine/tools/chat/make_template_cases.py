#!/usr/bin/env python3
"""Expected prompts of the chat templates, for llamadesk-cli --print-prompt's test.

Renders each message list below with each template, as transformers' apply_chat_template does
(jinja2 sandbox, trim_blocks, lstrip_blocks, add_generation_prompt=True, no date_string and no
strftime_now, so Llama 3.1 and 3.2 write "Today Date: 26 Jul 2024"), and writes
tests/data/chat/messages-N.json and tests/data/chat/<template>-N.txt. The build and the tests never
run Python: the outputs are committed.

The templates are the real ones in $LLAMADESK_SHARED_DIR/llama3/ (default ../shared) and the
project's own in tests/data/chat/ for the families whose templates ../shared lacks. BOS and EOS are
the tokens of the vocabulary the test renders with (Llama 3's, or Llama 2's for Zephyr, as TinyLlama
has). Mistral Nemo's template puts the system message into the last user message; LlamaDesk keeps it
in the first (so that adding a turn changes no earlier one), and that is rendered by the same
template with the system message merged into the first user message.

    pip install jinja2 && python3 engine/tools/chat/make_template_cases.py
"""
import json, os, sys

from jinja2.sandbox import ImmutableSandboxedEnvironment

CASES = [
    [{"role": "user", "content": "Hello!"}],
    [{"role": "system", "content": "You are a helpful assistant."}, {"role": "user", "content": "What is 2+2?"}],
    [{"role": "system", "content": " Be brief.\n"}, {"role": "user", "content": "Hi"},
     {"role": "assistant", "content": "Hello! How can I help?"}, {"role": "user", "content": "  Tell me a joke.  "}],
    [{"role": "user", "content": "<|eot_id|> and [INST] are text here"}, {"role": "assistant", "content": "ok"},
     {"role": "user", "content": "again"}],
    [{"role": "user", "content": "Gr\u00fc\u00dfe \U0001F44B \u4f60\u597d\nline two\n\n  indented"}],
]
LLAMA3 = ("<|begin_of_text|>", "<|end_of_text|>")
# name: (folder, bos_token, eos_token, system message moved into the first user message)
TEMPLATES = {
    "meta-llama-Llama-3.1-8B-Instruct": ("shared", *LLAMA3, False),
    "meta-llama-Llama-3.2-3B-Instruct": ("shared", *LLAMA3, False),
    "mistralai-Mistral-Nemo-Instruct-2407": ("shared", *LLAMA3, True),
    "chatml": ("project", *LLAMA3, False),
    "deepseek-r1": ("project", *LLAMA3, False),
    "zephyr": ("project", "<s>", "</s>", False),
}


def system_in_first_turn(messages):
    if not messages or messages[0]["role"] != "system":
        return messages
    first = dict(messages[1], content=messages[0]["content"] + "\n\n" + messages[1]["content"])
    return [first] + messages[2:]


def raise_exception(message):
    raise RuntimeError(message)


def main():
    shared = os.environ.get("LLAMADESK_SHARED_DIR", "../shared")
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tests", "data", "chat")
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.globals["raise_exception"] = raise_exception
    for n, messages in enumerate(CASES, 1):
        with open(os.path.join(out, f"messages-{n}.json"), "w", encoding="utf-8") as f:
            json.dump(messages, f, ensure_ascii=False, indent=1)
            f.write("\n")
    for name, (folder, bos, eos, moved) in TEMPLATES.items():
        where = os.path.join(shared, "llama3") if folder == "shared" else out
        with open(os.path.join(where, name + ".jinja"), encoding="utf-8") as f:
            template = env.from_string(f.read())
        for n, messages in enumerate(CASES, 1):
            given = system_in_first_turn(messages) if moved else messages
            text = template.render(messages=given, bos_token=bos, eos_token=eos, add_generation_prompt=True)
            with open(os.path.join(out, f"{name}-{n}.txt"), "w", encoding="utf-8", newline="") as f:
                f.write(text)
    print(f"{len(CASES)} message lists x {len(TEMPLATES)} templates written to {os.path.normpath(out)}")


if __name__ == "__main__":
    sys.exit(main())
