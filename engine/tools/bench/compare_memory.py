#!/usr/bin/env python3
"""Peak resident memory (max RSS) of llamadesk-cli and of llama.cpp running the same GGUF file at the
same context through the same number of tokens, in one run, beside the budget LlamaDesk holds
itself to: the file + the KV cache actually used + 64 MB.

Ours: `llamadesk-cli --model M --ctx-size C --prompt TEXT -n N --temperature 0 --stats`; the KV cache
used is the pool's "x / y MiB" of its --stats. llama.cpp (the PyPI package llama-cpp-python, driven
through its C API as compare_llamacpp.py does) runs in a child python that decodes as many tokens:
the prompt's count in one batch, then one token at a time. Python itself and the package's import
take memory llama.cpp's own programs would not, so a child that only imports the package is
measured too and shown as "python + import".

usage: compare_memory.py --cli build/engine/tools/cli/llamadesk-cli --model M [--ctx-size 1024]
       [-n 64] [--threads 2]
"""

import argparse
import os
import re
import subprocess
import sys

PROMPT = "Once upon a time, in a quiet town by the sea, there lived a lighthouse keeper who"
MB = 1e6


def run(cmd):
    """Runs cmd to its end; returns (peak RSS in bytes, stderr, exit status)."""
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = p.stderr.read().decode(errors="replace")
    _, status, usage = os.wait4(p.pid, 0)
    return usage.ru_maxrss * 1024, err, os.waitstatus_to_exitcode(status)


def llamacpp_child(path, n_ctx, n_tokens, threads):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import llama_cpp
    from compare_llamacpp import LlamaCpp
    import time

    m = LlamaCpp(llama_cpp, path, threads, time.perf_counter, n_ctx=n_ctx)
    prompt = n_tokens[0]
    m.decode(0, prompt)
    for i in range(n_tokens[1]):
        m.decode(prompt + i, 1)
    m.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", required=True, help="path of llamadesk-cli")
    ap.add_argument("--model", required=True, help="a GGUF file")
    ap.add_argument("--ctx-size", type=int, default=1024)
    ap.add_argument("-n", type=int, default=64, help="tokens generated after the prompt")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--child", nargs=2, type=int, metavar=("PROMPT_TOKENS", "NEW_TOKENS"), help=argparse.SUPPRESS)
    ap.add_argument("--import-only", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.import_only:
        import llama_cpp  # noqa: F401
        return
    if a.child:
        llamacpp_child(a.model, a.ctx_size, a.child, a.threads)
        return

    ours, err, code = run([a.cli, "--model", a.model, "--ctx-size", str(a.ctx_size), "--prompt", PROMPT,
                           "-n", str(a.n), "--temperature", "0", "--threads", str(a.threads), "--stats"])
    if code != 0:
        sys.exit(f"llamadesk-cli failed ({code}):\n{err}")
    prompt = int(re.search(r"prompt (\d+) tokens", err).group(1))
    generated = int(re.search(r"generated (\d+) tokens", err).group(1))
    kv_used = float(re.search(r"([\d.]+) / [\d.]+ MiB", err).group(1)) * 1024 * 1024

    me = [sys.executable, os.path.abspath(__file__), "--cli", a.cli, "--model", a.model,
          "--ctx-size", str(a.ctx_size), "--threads", str(a.threads)]
    theirs, err, code = run(me + ["--child", str(prompt), str(generated)])
    if code != 0:
        sys.exit(f"llama.cpp failed ({code}):\n{err}")
    baseline, _, _ = run(me + ["--import-only"])

    file_bytes = os.path.getsize(a.model)
    budget = file_bytes + kv_used + 64 * MB
    print(f"model {a.model}: {file_bytes / MB:.1f} MB, context {a.ctx_size}, "
          f"{prompt} prompt + {generated} generated tokens, {a.threads} threads")
    print(f"llamadesk-cli   max RSS {ours / MB:7.1f} MB  (KV cache used {kv_used / MB:.1f} MB)")
    print(f"llama.cpp       max RSS {theirs / MB:7.1f} MB  (python + import alone {baseline / MB:.1f} MB)")
    print(f"budget          file + KV used + 64 MB = {budget / MB:.1f} MB: "
          f"{'within' if ours <= budget else 'OVER'} by {abs(budget - ours) / MB:.1f} MB")
    print(f"ratio           ours / llama.cpp = {ours / theirs:.2f}")


if __name__ == "__main__":
    main()
