#!/usr/bin/env python3
"""Computes a text's perplexity with llamadesk-cli and with llama.cpp on the same GGUF file, the
same token ids and the same windows, and prints both figures and their difference.

llama.cpp comes from the PyPI package llama-cpp-python (install it with
CMAKE_ARGS="-DGGML_NATIVE=ON" pip install llama-cpp-python) and is driven through its low-level C
API: each window is one llama_decode of a batch that asks for every position's logits, and the
negative log-likelihoods come from a log-softmax in float64 here.

The windows are llamadesk's (see Engine::perplexity): with C the context length and tokens t0 (BOS)
.. t(N-1), each window is BOS followed by the next C - 1 text tokens, and every text token is
scored given the tokens before it in its window. llama.cpp's own perplexity tool scores only the
second half of each window, so its figure is not comparable; this script does not use it.

The token ids are llamadesk's (llamadesk-cli --tokenize), so the figures compare the forward
passes; llama.cpp's own tokenization of the text is checked against them and any difference is
reported.

usage: compare_perplexity.py --cli build/engine/tools/cli/llamadesk-cli
       [--model ../shared/models/stories260K/stories260K.gguf] [--text tests/data/perplexity_story.txt]
       [--repeat N] [--threads 2] [--json]
"""

import argparse
import ctypes
import json
import math
import os
import subprocess
import sys
import tempfile


def ours(cli, model, text_path, threads):
    cmd = [cli, "--model", model, "--perplexity", text_path, "--json", "--threads", str(threads)]
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


def our_tokens(cli, model, text):
    out = subprocess.run([cli, "--model", model, "--tokenize", text], check=True, capture_output=True, text=True)
    return [int(t) for t in out.stdout.split()]


def windows(tokens, context):
    """BOS then the next context - 1 text tokens, until every token after t0 is in one."""
    step = context - 1
    return [[tokens[0]] + tokens[first:first + step] for first in range(1, len(tokens), step)]


class LlamaCpp:
    def __init__(self, llama_cpp, np, path, context, threads):
        self.l = llama_cpp
        self.np = np
        self.model = llama_cpp.llama_model_load_from_file(path.encode(), llama_cpp.llama_model_default_params())
        if not self.model:
            raise RuntimeError(f"llama.cpp cannot load {path}")
        cparams = llama_cpp.llama_context_default_params()
        cparams.n_ctx = context
        cparams.n_batch = context  # a whole window in one llama_decode
        cparams.n_ubatch = context
        cparams.n_threads = threads
        cparams.n_threads_batch = threads
        self.ctx = llama_cpp.llama_init_from_model(self.model, cparams)
        if not self.ctx:
            raise RuntimeError("llama.cpp cannot create a context")
        self.vocab = llama_cpp.llama_model_get_vocab(self.model)
        self.n_vocab = llama_cpp.llama_vocab_n_tokens(self.vocab)
        self.batch = llama_cpp.llama_batch_init(context, 0, 1)

    def close(self):
        self.l.llama_batch_free(self.batch)
        self.l.llama_free(self.ctx)
        self.l.llama_model_free(self.model)

    def tokenize(self, text):
        data = text.encode()
        buf = (self.l.llama_token * (len(data) + 8))()
        n = self.l.llama_tokenize(self.vocab, data, len(data), buf, len(buf), True, False)
        if n < 0:
            raise RuntimeError("llama.cpp's tokenizer needs a larger buffer")
        return list(buf[:n])

    def nll_sum(self, window):
        """Sum of -log p(window[i] | window[:i]) for i >= 1: positions 0 .. len - 2, all logits."""
        self.l.llama_memory_clear(self.l.llama_get_memory(self.ctx), True)
        b = self.batch
        n = len(window) - 1
        for i in range(n):
            b.token[i] = window[i]
            b.pos[i] = i
            b.n_seq_id[i] = 1
            b.seq_id[i][0] = 0
            b.logits[i] = 1
        b.n_tokens = n
        if self.l.llama_decode(self.ctx, b) != 0:
            raise RuntimeError(f"llama_decode failed on a window of {n} tokens")
        np = self.np
        total = 0.0
        for i in range(n):
            row = np.ctypeslib.as_array(self.l.llama_get_logits_ith(self.ctx, i), shape=(self.n_vocab,))
            row = row.astype(np.float64)
            top = row.max()
            total += top + math.log(np.exp(row - top).sum()) - row[window[i + 1]]
        return total


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.normpath(os.path.join(here, "../../.."))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", required=True, help="path of llamadesk-cli")
    ap.add_argument("--model", default=os.path.join(root, "../shared/models/stories260K/stories260K.gguf"))
    ap.add_argument("--text", default=os.path.join(root, "tests/data/perplexity_story.txt"))
    ap.add_argument("--repeat", type=int, default=1, help="score the text repeated N times (to span several windows)")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args()

    with open(args.text, encoding="utf-8") as f:
        text = f.read()
    text = "\n".join([text.rstrip("\n")] * args.repeat) + "\n"

    import llama_cpp  # imported late so --help works without them
    import numpy as np

    llama_cpp.llama_backend_init()
    quiet = llama_cpp.llama_log_callback(lambda level, msg, data: None)
    llama_cpp.llama_log_set(quiet, ctypes.c_void_p())

    with tempfile.NamedTemporaryFile("w", suffix=".txt", encoding="utf-8", delete=False) as f:
        f.write(text)
        text_path = f.name
    try:
        mine = ours(args.cli, args.model, text_path, args.threads)
    finally:
        os.unlink(text_path)
    tokens = our_tokens(args.cli, args.model, text)
    if len(tokens) - 1 != mine["tokens"]:
        sys.exit(f"llamadesk-cli --tokenize gives {len(tokens)} tokens but --perplexity scored {mine['tokens']} + 1")

    theirs = LlamaCpp(llama_cpp, np, args.model, mine["context"], args.threads)
    try:
        their_tokens = theirs.tokenize(text)
        parts = windows(tokens, mine["context"])
        nll = sum(theirs.nll_sum(w) for w in parts) / mine["tokens"]
    finally:
        theirs.close()

    if len(parts) != mine["windows"]:
        sys.exit(f"window count differs: llamadesk {mine['windows']}, this script {len(parts)}")
    same_tokens = their_tokens == tokens
    row = {
        "model": args.model, "text": args.text, "repeat": args.repeat, "tokens": mine["tokens"],
        "windows": len(parts), "context": mine["context"], "same_tokenization": same_tokens,
        "ours": {"mean_nll": mine["mean_nll"], "perplexity": mine["perplexity"]},
        "llama.cpp": {"mean_nll": nll, "perplexity": math.exp(nll)},
        "mean_nll_difference": mine["mean_nll"] - nll,
    }
    if args.json:
        print(json.dumps(row, indent=1))
        return
    print(f"{os.path.basename(args.model)} on {os.path.basename(args.text)} x{args.repeat}: {mine['tokens']} tokens "
          f"scored in {len(parts)} window(s) of {mine['context']}; "
          f"llama.cpp's tokenization {'is the same' if same_tokens else 'DIFFERS (%d tokens)' % len(their_tokens)}")
    print(f"{'':<10} {'mean NLL':>12} {'perplexity':>12}")
    print(f"{'ours':<10} {mine['mean_nll']:>12.6f} {mine['perplexity']:>12.6f}")
    print(f"{'llama.cpp':<10} {nll:>12.6f} {math.exp(nll):>12.6f}")
    print(f"{'ours - lc':<10} {mine['mean_nll'] - nll:>12.2e} {mine['perplexity'] - math.exp(nll):>12.2e}")


if __name__ == "__main__":
    main()
