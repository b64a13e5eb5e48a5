#!/usr/bin/env python3
"""llamadesk-server against llama-cpp-python's server (PyPI llama-cpp-python[server]): the same
GGUF file, the same threads, the same clients, one after the other on a quiet machine.

For each server and each concurrency (default 1, 4 and 16 clients at once), every client streams
`--requests` chat answers of `--max-tokens` tokens (a long system prompt, then its own question),
then one follow-up turn that repeats its last exchange with a new question. Printed per run:
  throughput   completion tokens of all clients / wall time
  ttft         median time to the first streamed text of a first request
  ttft follow  median time to the first streamed text of the follow-up turn
and our figures over theirs. A model of random weights never stops early, so every answer is
--max-tokens long (`llamadesk-bench --synthetic 110M --dtype q4_0 --vocab
ggml-vocab-llama-spm.gguf --write-gguf random-110m-chat.gguf`: Llama 2's vocabulary, and "chat" in
the name gives both servers the Llama 2 chat format). Usage:
  compare_llama_server.py --server build/app/server/llamadesk-server --python PYTHON_WITH_LLAMA_CPP
      --model FILE.gguf [--threads 2] [--concurrency 1,4,16] [--requests 2] [--max-tokens 32]
"""
import argparse
import json
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.request

SYSTEM = ("You are a careful assistant inside a desktop chat application. " * 40).strip()
QUESTIONS = ["What is a KV cache?", "How do I start a new conversation?", "How do I load a model?",
             "What does the inspector show?", "What are tokens per second?", "How do I export a chat?",
             "Can I use a GPU?", "What is a context shift?", "How do I search?", "What is the built-in model?",
             "How do I stop an answer?", "What is a system prompt?", "How do I import?", "What is Q4_K_M?",
             "What is prefill?", "What is decode?"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(kind, args):
    port = free_port()
    if kind == "llamadesk":
        cmd = [args.server, "--model", args.model, "--port", str(port), "--threads", str(args.threads),
               "--parallel", "16", "--ctx-size", str(args.ctx)]
    else:
        cmd = [args.python, "-m", "llama_cpp.server", "--model", args.model, "--port", str(port),
               "--n_threads", str(args.threads), "--n_ctx", str(args.ctx), "--verbose", "False",
               # By default it cuts a stream short when another request comes: every answer whole here.
               "--interrupt_requests", "False"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}/v1"
    deadline = time.time() + 120
    while True:
        try:
            urllib.request.urlopen(base + "/models", timeout=2)
            return proc, base
        except OSError:
            if proc.poll() is not None or time.time() > deadline:
                proc.kill()
                sys.exit(f"{kind} did not start: {proc.stderr.read()[-2000:]}")
            time.sleep(0.2)


def stream(base, messages, max_tokens):
    """One streamed chat answer: (seconds to first text, completion text, tokens, seconds). Tokens
    are the usage the server reports (stream_options.include_usage), else the chunks with text,
    which llama-cpp-python sends one per token."""
    body = json.dumps({"model": "m", "messages": messages, "max_tokens": max_tokens, "temperature": 0,
                       "stream": True, "stream_options": {"include_usage": True}}).encode()
    req = urllib.request.Request(base + "/chat/completions", body, {"Content-Type": "application/json"})
    start = time.time()
    first, text, pieces, usage = None, [], 0, None
    with urllib.request.urlopen(req, timeout=600) as resp:
        for raw in resp:
            line = raw.decode().strip()
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            chunk = json.loads(line[6:])
            if chunk.get("usage"):
                usage = chunk["usage"]["completion_tokens"]
            for c in chunk.get("choices", []):
                piece = (c.get("delta") or {}).get("content") or ""
                if piece:
                    pieces += 1
                    text.append(piece)
                    if first is None:
                        first = time.time() - start
    return first or (time.time() - start), "".join(text), usage if usage is not None else pieces, time.time() - start


def run(base, clients, args):
    ttft, ttft_follow, errors = [], [], []
    tokens = [0]
    lock = threading.Lock()

    def client(i):
        try:
            q = QUESTIONS[i % len(QUESTIONS)]
            messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": f"{q} ({i})"}]
            answer = ""
            for r in range(args.requests):
                first, answer, n, _ = stream(base, messages, args.max_tokens)
                with lock:
                    ttft.append(first)
                    tokens[0] += n
                if r + 1 < args.requests:
                    messages = messages[:1] + [{"role": "user", "content": f"{q} ({i}, {r + 1})"}]
            follow = messages + [{"role": "assistant", "content": answer},
                                 {"role": "user", "content": "Say more."}]
            first, _, n, _ = stream(base, follow, args.max_tokens)
            with lock:
                ttft_follow.append(first)
                tokens[0] += n
        except Exception as e:  # reported, and the run counts as failed
            errors.append(repr(e))

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    start = time.time()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.time() - start
    if errors:
        sys.exit(f"{len(errors)} client(s) failed: {errors[:3]}")
    return tokens[0] / wall, statistics.median(ttft), statistics.median(ttft_follow)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--server", required=True)
    p.add_argument("--python", required=True, help="a python with llama-cpp-python[server]")
    p.add_argument("--model", required=True)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--ctx", type=int, default=2048)
    p.add_argument("--concurrency", default="1,4,16")
    p.add_argument("--requests", type=int, default=2)
    p.add_argument("--max-tokens", type=int, default=32)
    args = p.parse_args()
    levels = [int(c) for c in args.concurrency.split(",")]
    results = {}
    for kind in ("llamadesk", "llama-cpp-python"):
        proc, base = start(kind, args)
        try:
            stream(base, [{"role": "user", "content": "warm up"}], 4)
            for c in levels:
                results[(kind, c)] = run(base, c, args)
                tput, t1, t2 = results[(kind, c)]
                print(f"{kind:17s} clients {c:2d}: {tput:8.1f} tok/s  ttft {1000 * t1:8.1f} ms  "
                      f"ttft follow-up {1000 * t2:8.1f} ms", flush=True)
        finally:
            proc.terminate()
            proc.wait(30)
    print("\nours / theirs (throughput: higher is better; times: theirs / ours, higher is better)")
    for c in levels:
        a, b = results[("llamadesk", c)], results[("llama-cpp-python", c)]
        print(f"clients {c:2d}: throughput {a[0] / b[0]:.2f}x  ttft {b[1] / a[1]:.2f}x  "
              f"ttft follow-up {b[2] / a[2]:.2f}x")


if __name__ == "__main__":
    main()
