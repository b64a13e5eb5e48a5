#!/usr/bin/env python3
"""Tokenizer speed against tiktoken, same text, same run, one thread each.

Makes about 1 MB of mixed text from the inputs of tests/data/tokenizer/llama3-cases.inp (code,
whitespace, digits, many scripts, emoji), encodes it with tiktoken (built from the real Llama 3
vocabulary, as make_llama3_cases.py builds it) and with llamadesk-tokenizer-bench, checks that
both give the same number of tokens, and prints MB/s and the ratio. Needs `pip install gguf
tiktoken`.

    python3 engine/tools/bench/compare_tiktoken.py --bench build/engine/tools/bench/llamadesk-tokenizer-bench
"""
import argparse, os, re, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tokenizer"))
import make_llama3_cases as cases  # noqa: E402


def main():
    shared = os.environ.get("LLAMADESK_SHARED_DIR", "../shared")
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True)
    ap.add_argument("--vocab", default=os.path.join(shared, "llama3", "ggml-vocab-llama-bpe.gguf"))
    ap.add_argument("--megabytes", type=float, default=1.0)
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()

    inputs = cases.read_inp(os.path.join(HERE, "..", "..", "..", "tests", "data", "tokenizer", "llama3-cases.inp"))
    one = "\n".join(inputs)
    text = (one * (int(a.megabytes * 1e6) // len(one.encode()) + 1))
    data = text.encode()
    enc = cases.load_encoding(a.vocab)
    best = 1e30
    for _ in range(a.runs):
        start = time.perf_counter()
        n_tiktoken = len(enc.encode_ordinary(text))
        best = min(best, time.perf_counter() - start)
    with tempfile.NamedTemporaryFile(suffix=".txt") as f:
        f.write(data)
        f.flush()
        out = subprocess.run([a.bench, "--tokenizer", a.vocab, "--text", f.name, "--runs", str(a.runs)],
                             check=True, capture_output=True, text=True).stdout
    print(out, end="")
    m = re.search(r"text: (\d+) bytes, (\d+) tokens, ([\d.]+) s", out)
    ours_tokens, ours_s = int(m.group(2)), float(m.group(3))
    print(f"tiktoken {getattr(cases.tiktoken, '__version__', '?')}: {len(data)} bytes, {n_tiktoken} tokens, "
          f"{best:.5f} s, {len(data) / 1e6 / best:.2f} MB/s")
    print(f"ours / tiktoken: {best / ours_s:.2f}x the speed" +
          ("" if ours_tokens == n_tiktoken else f"  (TOKEN COUNTS DIFFER: {ours_tokens} vs {n_tiktoken})"))


if __name__ == "__main__":
    main()
