#!/usr/bin/env python3
"""Make Llama 3 tokenizer test cases whose expected ids come from tiktoken.

Writes tests/data/tokenizer/llama3-cases.inp and llama3-cases.out so a C++
test can check our byte-level BPE tokenizer against tiktoken's reference BPE.

Run from the repository root (needs `pip install gguf tiktoken`):
    python3 engine/tools/tokenizer/make_llama3_cases.py [--vocab PATH] [--out-dir DIR]
--vocab defaults to $LLAMADESK_SHARED_DIR/llama3/ggml-vocab-llama-bpe.gguf
(LLAMADESK_SHARED_DIR defaults to ../shared); --out-dir to tests/data/tokenizer.

The tiktoken Encoding is built from the GGUF vocabulary itself (ids < 128000
mapped from GPT-2 bytes_to_unicode form back to raw bytes, rank = id) with
Meta's Llama 3 split pattern and no special tokens (encode_ordinary, so text
like "<|eot_id|>" is plain text). Before writing anything it must reproduce
every llama.cpp vector in <vocab>.inp / <vocab>.out, else it exits 1.

File layout (identical to llama.cpp's ggml-vocab-*.gguf.inp/.out):
  .inp  UTF-8, no BOM, no newline translation: for every input, the input's
        exact text followed by SEP = "\\n__ggml_vocab_test__\\n". Read it by
        repeatedly taking the text before the first SEP (equivalently split
        the whole file on SEP and drop the empty last piece). An input's own
        trailing newline survives because SEP adds its own "\\n": input "\\n"
        is stored as "\\n\\n__ggml_vocab_test__\\n". An input ending in "\\r\\n"
        keeps it ("\\r" bytes are written as is).  No input may contain SEP
        or end with "\\n__ggml_vocab_test__" (checked).
  .out  one line per input, in order, each id preceded by one space, no BOS,
        ended by "\\n" (e.g. " 9906 1917\\n"); an empty input gives "\\n".
"""
import argparse, os, sys

import tiktoken
from gguf import GGUFReader

SEP = "\n__ggml_vocab_test__\n"
N_NORMAL = 128000
PAT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
       r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")


def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) \
        + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, (chr(c) for c in cs)))


def load_encoding(vocab_path):
    r = GGUFReader(vocab_path)
    f = r.fields["tokenizer.ggml.tokens"]
    tokens = [bytes(f.parts[i]).decode("utf-8") for i in f.data]
    t = r.fields["tokenizer.ggml.token_type"]
    types = [int(t.parts[i][0]) for i in t.data]
    assert len(tokens) == 128256, len(tokens)
    assert all(x == 1 for x in types[:N_NORMAL]), "ids < 128000 must be normal"
    assert all(x != 1 for x in types[N_NORMAL:]), "ids >= 128000 must be special"
    u2b = {u: b for b, u in bytes_to_unicode().items()}
    ranks = {bytes(u2b[c] for c in tok): i for i, tok in enumerate(tokens[:N_NORMAL])}
    assert len(ranks) == N_NORMAL, "duplicate byte strings in vocab"
    return tiktoken.Encoding(name="llama3", pat_str=PAT, mergeable_ranks=ranks,
                             special_tokens={})


def read_inp(path):
    with open(path, "r", encoding="utf-8", newline="") as fh:
        parts = fh.read().split(SEP)
    assert parts[-1] == "", "file must end with the separator"
    return parts[:-1]


def read_out(path):
    with open(path, "r", encoding="utf-8", newline="") as fh:
        return [[int(x) for x in line.split()] for line in fh.read().split("\n")[:-1]]


P1 = ("The quick brown fox jumps over the lazy dog. It wasn't the first time; "
      "the dog had seen foxes before, and he'd learned that chasing them was pointless. "
      "Instead he lay there, watching the clouds drift across a pale September sky, "
      "thinking about dinner (beef, probably) and the 3,500 steps he'd walked that "
      "morning. \"Tomorrow,\" he thought, \"I'LL catch one.\" But tomorrow never came -- "
      "or rather, it came 1,000 times, and each time he said the same thing... "
      "Such is life for a dog named Rex, aged 7.5 years, living at 221B Baker Street.")
P2 = ("// Copyright 2024 LlamaDesk authors.\n#include <vector>\n#include <string>\n\n"
      "namespace ld {\n\nstruct Token { int32_t id; float score; };\n\n"
      "std::vector<Token> merge(const std::vector<Token>& a, const std::vector<Token>& b) {\n"
      "    std::vector<Token> out;\n    out.reserve(a.size() + b.size());\n"
      "    for (size_t i = 0, j = 0; i < a.size() || j < b.size();) {\n"
      "        if (j >= b.size() || (i < a.size() && a[i].score > b[j].score)) out.push_back(a[i++]);\n"
      "        else out.push_back(b[j++]);\n    }\n    return out;\n}\n\n}  // namespace ld\n")
P3 = ("人工智能（AI）是指由人制造出来的机器所表现出来的智能。通常人工智能是指通过普通计算机程序来呈现人类智能的技术。"
      "该词也指出研究这样的智能系统是否能够实现，以及如何实现。同时，通过医学、神经科学、机器人学及统计学等的进步，"
      "常态预测则认为人类的很多职业也逐渐被其取代。人工智能的研究是高度技术性和专业性的，各分支领域都是深入且各不相通的，"
      "因而涉及范围极广。东京タワーは日本の東京都港区芝公園にある総合電波塔である。한국어는 대한민국과 조선민주주의인민공화국의 공용어이다. "
      "Русский язык — язык восточнославянской группы славянской ветви индоевропейской языковой семьи.")
P4 = ("# Release notes v2.3.0\n\n## Highlights\n\n- **Faster** tokenizer: up to 3x on long inputs (see #1234).\n"
      "- New `--ctx-size` flag; default is `4096`.\n- Fixed a crash when the prompt contained `\\r\\n`.\n\n"
      "| model | tokens/s | mem (GiB) |\n|-------|---------:|----------:|\n| 8B Q4_K_M | 112.5 | 5.1 |\n"
      "| 70B Q4_K_M | 14.2 | 40.9 |\n\n> Note: numbers measured on an RTX 4090, 2024-05-01.\n\n"
      "```bash\n./llamadesk-cli -m model.gguf -p \"Hello\" -n 128\n```\n\nSee https://example.com/docs?page=2&lang=en#tokenizer for details.\n")

CASES = [
    # --- source code ---
    "int main() {\n    return 0;\n}\n",
    "#include <iostream>\nint main(int argc, char** argv) { std::cout << \"hi\\n\"; }",
    "template <typename T>\nauto sum(const std::vector<T>& v) -> T {\n\treturn std::accumulate(v.begin(), v.end(), T{});\n}",
    "x->y = &z; a::b::c(); p != nullptr && q >= 0 || r <<= 2;",
    "for (int i = 0; i < n; ++i) { a[i] += b[i] * c[i]; }",
    "def f(x):\n    if x > 0:\n        return x\n    else:\n        return -x\n",
    "class Foo:\n    def __init__(self, a, b=None):\n        self.a = a\n        self._b = b or []\n\n    def __repr__(self):\n        return f\"Foo({self.a!r})\"\n",
    "import numpy as np\nx = np.arange(10)[::-1]\nprint(x.reshape(2, 5).T @ x[:2])",
    "    # indented comment\n        deeper = True\n\t\ttabbed = False\n",
    "lambda *args, **kwargs: (args, kwargs)",
    "{\"name\": \"llama\", \"version\": 3, \"tags\": [\"a\", \"b\"], \"nested\": {\"x\": null, \"y\": true}}",
    "{\n  \"id\": 128000,\n  \"content\": \"<|begin_of_text|>\",\n  \"special\": true\n}\n",
    "[1,2,3,{\"a\":[4.5e-3,-6E+7]}]",
    "SELECT id, name FROM users WHERE age >= 18 ORDER BY name DESC LIMIT 10;",
    "#!/bin/bash\nset -euo pipefail\nfor f in *.txt; do echo \"$f\"; done\n",
    "<div class=\"a\"><p>Hello &amp; welcome!</p></div>",
    "fn main() { let v: Vec<u8> = vec![0xFF, 0x0a]; println!(\"{:?}\", v); }",
    "const f = async (x) => { await x?.y ?? 0; };",
    # --- whitespace ---
    " ", "  ", "   ", "        ", "\t", "\t\t", "\n", "\n\n", "\n\n\n\n\n",
    "\r\n", "\r\n\r\n", "\r", "a\r\nb\r\n", " \t \n \t\n",
    "hello   world", "hello\t\tworld", "trailing spaces   ", "trailing newline\n",
    "   leading spaces", "\n\nleading newlines", "a \n b \n  c", "line1\n\n\nline2",
    "x\u00a0y", "x\u3000y", "tab\tthen  \n  spaces", "  \n  \n", "end with tab\t",
    "word\n    indented\n\tTabbed\n",
    # --- digits ---
    "1", "12", "123", "1234", "12345", "123456", "1234567", "12345678",
    "123456789", "1234567890", "12345678901", "123456789012",
    "3.14159", "0.001", "-42", "1,000,000", "1.000.000,00", "$19.99", "50%",
    "+1 (555) 123-4567", "555-0199", "+44 20 7946 0958", "2024-05-01T12:34:56Z",
    "v1.2.3", "0x1F4A", "1e10", "a1b2c3", "٣٤٥ ١٢", "१२३४५",
    # --- contractions ---
    "I'm", "I'M", "You'll", "You'LL", "YOU'LL", "don't", "DON'T", "Don'T",
    "we've", "WE'VE", "they're", "THEY'RE", "he'd", "HE'D", "it's", "IT'S",
    "'s", "'S going", "'tis the season", "'re 've 'm 'll 'd",
    "rock 'n' roll", "o'clock", "the students' books", "I’m curly-quoted",
    # --- scripts ---
    "你好，世界！", "我想在apple工作1314151天～", "東京は日本の首都です。",
    "ひらがなとカタカナ、漢字", "안녕하세요, 세계!", "مرحبا بالعالم",
    "اللغة العربية جميلة جداً", "שלום עולם", "עברית מימין לשמאל",
    "नमस्ते दुनिया", "हिन्दी भाषा", "สวัสดีชาวโลก", "ภาษาไทยไม่มีช่องว่าง",
    "Привет, мир!", "ЗАГЛАВНЫЕ буквы", "Γειά σου Κόσμε", "ΑΒΓΔ αβγδ",
    "Tiếng Việt có dấu", "Vie\u0323\u0302t Nam (combining)", "e\u0301 vs \u00e9",
    "Ångström naïve café façade", "Straße Größe", "ქართული ენა",
    "Հայերեն", "ᐊᐃᑦᓯᓐᓇᐃᑦ", "កាន់តែពិសេសអាច",
    # --- emoji ---
    "🚀", "😀😃😄", "👍🏽", "👋🏿 hi", "👨‍👩‍👧‍👦", "🏳️‍🌈", "🇺🇸🇯🇵🇩🇪",
    "😶‍🌫️ (multiple emojis concatenated)", "❤️", "I ❤ NY", "✅ done", "🦙🦙🦙 llamas",
    # --- special-token text, must be plain text ---
    "<|eot_id|>", "<|begin_of_text|>", "<|begin_of_text|>Hello<|eot_id|>",
    "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>",
    "[INST] What is 2+2? [/INST]", "<s>[INST] hi [/INST]</s>", "<s>", "</s>",
    "<|reserved_special_token_0|>", "<unk> <pad> <mask>",
    # --- long words, URLs, markdown ---
    "supercalifragilisticexpialidocious", "pneumonoultramicroscopicsilicovolcanoconiosis",
    "Donaudampfschifffahrtsgesellschaftskapitän", "a" * 100, "ab" * 60,
    "https://www.example.com/path/to/page.html?query=1&b=two#section",
    "http://localhost:8080/api/v1/tokens", "mailto:someone@example.org",
    "git@github.com:owner/repo.git", "C:\\Users\\name\\file.txt", "/usr/local/bin/python3",
    "# Title\n\n## Subtitle\n\n- item 1\n- item 2\n\n**bold** _italic_ `code`",
    "[link](https://example.com) ![img](a.png)", "> quote\n>> nested",
    "```python\nprint('hi')\n```", "| a | b |\n|---|---|\n| 1 | 2 |",
    # --- punctuation runs ---
    "!!!???...", "''''''```````\"\"\"\"......!!!!!!??????", "------=======",
    "...", "?!?!", "((()))[[[]]]{{{}}}", "@#$%^&*", "~~~", "<<<>>>", ";;;:::",
    "a--b__c..d", "\\\\\\", "'''", "\"\"\"docstring\"\"\"", "«quoted» „German“",
    "–—―", "•·•", "¿Qué? ¡Sí!", "3..3 3...3", "\u200b zero\u200bwidth",
    "\ufeffBOM at start", "control\x01\x7fchars",
    # --- paragraphs ---
    P1, P2, P3, P4,
    P1.upper(), P1.replace(" ", "  "),
]


def main():
    shared = os.environ.get("LLAMADESK_SHARED_DIR", "../shared")
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vocab", default=os.path.join(shared, "llama3", "ggml-vocab-llama-bpe.gguf"))
    ap.add_argument("--out-dir", default=os.path.join("tests", "data", "tokenizer"))
    a = ap.parse_args()

    enc = load_encoding(a.vocab)

    ref_in, ref_out = read_inp(a.vocab + ".inp"), read_out(a.vocab + ".out")
    assert len(ref_in) == len(ref_out), (len(ref_in), len(ref_out))
    ok = sum(enc.encode_ordinary(s) == ids for s, ids in zip(ref_in, ref_out))
    print(f"llama.cpp vectors: {ok}/{len(ref_in)} match")
    if ok != len(ref_in):
        for s, ids in zip(ref_in, ref_out):
            if enc.encode_ordinary(s) != ids:
                print("MISMATCH", repr(s)[:80], file=sys.stderr)
        return 1

    assert len(set(CASES)) == len(CASES), "duplicate case"
    for s in CASES:
        assert s and (s + SEP).find(SEP) == len(s), f"bad input: {s!r}"
    ids = [enc.encode_ordinary(s) for s in CASES]
    for s, t in zip(CASES, ids):
        assert enc.decode_bytes(t) == s.encode("utf-8")

    os.makedirs(a.out_dir, exist_ok=True)
    inp, out = (os.path.join(a.out_dir, "llama3-cases" + e) for e in (".inp", ".out"))
    with open(inp, "w", encoding="utf-8", newline="") as fh:
        fh.write("".join(s + SEP for s in CASES))
    with open(out, "w", encoding="utf-8", newline="") as fh:
        fh.write("".join("".join(f" {i}" for i in t) + "\n" for t in ids))

    assert read_inp(inp) == CASES and read_out(out) == ids, "read-back mismatch"
    print(f"own cases: {len(CASES)} written to {inp} and {out} (read back OK)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
