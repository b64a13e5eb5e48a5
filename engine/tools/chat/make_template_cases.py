#!/usr/bin/env python3
"""Expected prompts of the real chat templates, for llamadesk-cli --print-prompt's test.

Renders each message list below with each Llama 3 template in $LLAMADESK_SHARED_DIR/llama3/ (default
../shared) as transformers' apply_chat_template does (jinja2 sandbox, trim_blocks, lstrip_blocks,
bos_token "<|begin_of_text|>", add_generation_prompt=True, no date_string and no strftime_now, so
both templates write "Today Date: 26 Jul 2024"), and writes tests/data/chat/messages-N.json and
tests/data/chat/<template>-N.txt. The build and the tests never run Python: the outputs are committed.

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
TEMPLATES = ["meta-llama-Llama-3.1-8B-Instruct", "meta-llama-Llama-3.2-3B-Instruct"]


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
    for name in TEMPLATES:
        with open(os.path.join(shared, "llama3", name + ".jinja"), encoding="utf-8") as f:
            template = env.from_string(f.read())
        for n, messages in enumerate(CASES, 1):
            text = template.render(messages=messages, bos_token="<|begin_of_text|>", add_generation_prompt=True)
            with open(os.path.join(out, f"{name}-{n}.txt"), "w", encoding="utf-8", newline="") as f:
                f.write(text)
    print(f"{len(CASES)} message lists x {len(TEMPLATES)} templates written to {os.path.normpath(out)}")


if __name__ == "__main__":
    sys.exit(main())
