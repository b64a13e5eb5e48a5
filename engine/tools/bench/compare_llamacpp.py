#!/usr/bin/env python3
"""Times llama.cpp's CPU backend and llamadesk-bench on the same GGUF files with the same thread
count, in one run, and prints the figures side by side.

llama.cpp comes from the PyPI package llama-cpp-python (it builds llama.cpp from source; install it
with CMAKE_ARGS="-DGGML_NATIVE=ON" pip install llama-cpp-python) and is driven through its C API the
way llama-bench does: a prefill of N tokens is llama_decode of batches of up to n_batch tokens (2048
by default), one batch for N <= 2048; decode speed at position P is timed one token per llama_decode
after the context was filled to P. With --batch, k sequences (each its own part of llama.cpp's cache,
as each of ours has its own blocks) are filled to llamadesk-bench's batch position and decode one
token each per llama_decode, as in a server's batch; the rows give the tokens per second of all k.

Rows: stories260K from ../shared (when present), the synthetic 15M and 110M shapes in f32 and f16
and the 110M shape in q8_0, q4_0 and q4_k_m. Not in the default list, for its 4.9 GB: 8B-q4_k_m,
Llama 3 8B's shape (dim 4096, 32 layers, 8 kv heads, ffn 14336) with Llama 3's vocabulary from
../shared, whose 128256-row classifier is Q6_K as in llama.cpp's Q4_K_M files (on 2 cores:
--models 8B-q4_k_m --prefill 128 --decode-at 16,512 --repeats 3). Each file is written once by `llamadesk-bench --synthetic X --dtype D --write-gguf` so both programs read the very
same weights. Our positions and prompt sizes are taken from llamadesk-bench's JSON, so both sides
are timed at exactly the same points.

usage: compare_llamacpp.py --bench build/engine/tools/bench/llamadesk-bench [--threads 2]
       [--repeats 5] [--work-dir /tmp/llamadesk-compare] [--models 260K,15M-f32,...] [--prefill 512,1000]
       [--decode-at 16,256] [--batch 1,4,8] [--rounds 3] [--cpu-time] [--json]
"""

import argparse
import ctypes
import json
import os
import random
import statistics
import subprocess
import sys
import time

DEFAULT_MODELS = ["260K", "15M-f32", "15M-f16", "110M-f32", "110M-f16", "110M-q8_0", "110M-q4_0", "110M-q4_k_m"]
DECODE_TOKENS = 8  # tokens per decode sample, as in llamadesk-bench


def ours(bench, path, threads, repeats, cpu_time, prefill, decode_at, batch):
    cmd = [bench, "--model", path, "--threads", str(threads), "--repeats", str(repeats), "--json", "--batch", batch or "1"]
    if prefill:
        cmd += ["--prefill", prefill]
    if decode_at:
        cmd += ["--decode-at", decode_at]
    out = subprocess.run(cmd + (["--cpu-time"] if cpu_time else []), check=True, capture_output=True, text=True).stdout
    return json.loads(out)


class LlamaCpp:
    """One model and context of llama.cpp, timed through the low-level API."""

    def __init__(self, llama_cpp, path, threads, clock, n_ctx=0, n_seq_max=1):
        self.l = llama_cpp
        self.clock = clock
        mparams = llama_cpp.llama_model_default_params()
        self.model = llama_cpp.llama_model_load_from_file(path.encode(), mparams)
        if not self.model:
            raise RuntimeError(f"llama.cpp cannot load {path}")
        cparams = llama_cpp.llama_context_default_params()
        cparams.n_ctx = n_ctx  # 0: the model's own context length
        cparams.n_threads = threads
        cparams.n_threads_batch = threads
        cparams.n_seq_max = n_seq_max  # each sequence its own part of the cache, as each of ours has its own blocks
        cparams.kv_unified = False
        self.ctx = llama_cpp.llama_init_from_model(self.model, cparams)
        if not self.ctx:
            raise RuntimeError("llama.cpp cannot create a context")
        self.n_ctx = llama_cpp.llama_n_ctx(self.ctx)
        self.n_batch = llama_cpp.llama_n_batch(self.ctx)  # the most tokens one llama_decode takes
        self.batch = llama_cpp.llama_batch_init(self.n_ctx, 0, 1)
        self.memory = llama_cpp.llama_get_memory(self.ctx)
        vocab = llama_cpp.llama_vocab_n_tokens(llama_cpp.llama_model_get_vocab(self.model))
        rng = random.Random(1234)
        self.tokens = [rng.randrange(3, vocab) for _ in range(self.n_ctx)]

    def close(self):
        self.l.llama_batch_free(self.batch)
        self.l.llama_free(self.ctx)
        self.l.llama_model_free(self.model)

    def decode(self, start, n):
        """Runs tokens start .. start + n - 1 as one batch, logits for the last one only."""
        b = self.batch
        for i in range(n):
            b.token[i] = self.tokens[start + i]
            b.pos[i] = start + i
            b.n_seq_id[i] = 1
            b.seq_id[i][0] = 0
            b.logits[i] = 1 if i == n - 1 else 0
        b.n_tokens = n
        if self.l.llama_decode(self.ctx, b) != 0:
            raise RuntimeError(f"llama_decode failed at {start}+{n}")
        self.l.llama_synchronize(self.ctx)

    def fill(self, start, n):
        """Runs tokens start .. start + n - 1 in batches of at most n_batch, as llama-bench does."""
        for at in range(start, start + n, self.n_batch):
            self.decode(at, min(self.n_batch, start + n - at))

    def forget_from(self, pos, seq=0):
        self.l.llama_memory_seq_rm(self.memory, seq, pos, -1)

    def prefill_tokens_per_s(self, n, repeats):
        times = []
        for _ in range(repeats + 1):  # the first run warms up and is dropped
            self.forget_from(0)
            t = self.clock()
            self.fill(0, n)
            times.append(self.clock() - t)
        return n / statistics.median(times[1:])

    def decode_tokens_per_s(self, pos, repeats):
        self.forget_from(0)
        if pos > 0:
            self.fill(0, pos)
        times = []
        for _ in range(repeats):
            self.forget_from(pos)
            t = self.clock()
            for i in range(DECODE_TOKENS):
                self.decode(pos + i, 1)
            times.append((self.clock() - t) / DECODE_TOKENS)
        return 1.0 / statistics.median(times)

    def batch_tokens_per_s(self, pos, k, repeats):
        """k sequences filled to pos (the first decoded, the others its copies), then one token of
        each per llama_decode, logits for all, as llamadesk-bench --batch times ours: tok/s in all."""
        self.forget_from(0, -1)
        if pos > 0:
            self.fill(0, pos)
        for q in range(1, k):
            self.l.llama_memory_seq_cp(self.memory, 0, q, -1, -1)  # whole: between streams llama.cpp copies no less
        b = self.batch
        times = []
        for _ in range(repeats):
            self.forget_from(pos, -1)
            t = self.clock()
            for i in range(DECODE_TOKENS):
                for q in range(k):
                    b.token[q] = self.tokens[pos + i]
                    b.pos[q] = pos + i
                    b.n_seq_id[q] = 1
                    b.seq_id[q][0] = q
                    b.logits[q] = 1
                b.n_tokens = k
                if self.l.llama_decode(self.ctx, b) != 0:
                    raise RuntimeError(f"llama_decode failed for {k} sequences at {pos + i}")
                self.l.llama_synchronize(self.ctx)
            times.append((self.clock() - t) / DECODE_TOKENS)
        return k / statistics.median(times)


def model_path(name, bench, work_dir, shared):
    if name == "260K":
        path = os.path.join(shared, "models/stories260K/stories260K.gguf")
        return path if os.path.exists(path) else None
    shape, dtype = name.rsplit("-", 1)
    path = os.path.join(work_dir, f"synthetic-{shape}-{dtype}.gguf")
    if not os.path.exists(path):
        cmd = [bench, "--synthetic", shape, "--dtype", dtype, "--write-gguf", path]
        vocab = os.path.join(shared, "llama3/ggml-vocab-llama-bpe.gguf")
        if shape == "8B" and os.path.exists(vocab):  # Llama 3's own vocabulary, as its files have
            cmd += ["--vocab", vocab]
        subprocess.run(cmd, check=True)
    return path


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", required=True, help="path of llamadesk-bench")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--work-dir", default="/tmp/llamadesk-compare")
    ap.add_argument("--shared", default=os.path.normpath(os.path.join(here, "../../../../shared")))
    ap.add_argument("--models", default=",".join(DEFAULT_MODELS))
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    ap.add_argument("--rounds", type=int, default=1,
                    help="time ours then llama.cpp this many times in turn; each side's median over the rounds")
    ap.add_argument("--prefill", help="prompt sizes to time, as llamadesk-bench --prefill takes them (512,1000)")
    ap.add_argument("--decode-at", help="positions to time decode at, as llamadesk-bench --decode-at takes them")
    ap.add_argument("--batch", help="sequences per batched decode step to time, as llamadesk-bench --batch takes them (1,4,8)")
    ap.add_argument("--cpu-time", action="store_true",
                    help="time both with process CPU time instead of the wall clock (one thread, busy machine)")
    args = ap.parse_args()

    import llama_cpp  # imported late so --help works without it

    llama_cpp.llama_backend_init()
    quiet = llama_cpp.llama_log_callback(lambda level, text, data: None)
    llama_cpp.llama_log_set(quiet, ctypes.c_void_p())
    os.makedirs(args.work_dir, exist_ok=True)

    rows = []
    for name in args.models.split(","):
        path = model_path(name, args.bench, args.work_dir, args.shared)
        if path is None:
            print(f"skipping {name}: file not found", file=sys.stderr)
            continue
        clock = time.process_time if args.cpu_time else time.perf_counter
        theirs = LlamaCpp(llama_cpp, path, args.threads, clock)
        sequences = [int(k) for k in args.batch.split(",")] if args.batch else []
        theirs_batched = None  # made once ours says where the batch decodes
        figures = {}  # row -> ([ours per round], [llama.cpp per round])
        try:
            for _ in range(args.rounds):  # the two programs take turns, so a drift of the machine hits both
                mine = ours(args.bench, path, args.threads, args.repeats, args.cpu_time, args.prefill, args.decode_at,
                            args.batch)
                for p in mine["prefill"]:
                    f = figures.setdefault(f"prefill {p['tokens']}", ([], []))
                    f[0].append(p["tokens_per_s"])
                    f[1].append(theirs.prefill_tokens_per_s(p["tokens"], args.repeats))
                for d in mine["decode"]:
                    if d["position"] + DECODE_TOKENS > theirs.n_ctx:
                        continue
                    f = figures.setdefault(f"decode @{d['position']}", ([], []))
                    f[0].append(d["tokens_per_s"])
                    f[1].append(theirs.decode_tokens_per_s(d["position"], args.repeats))
                for b in mine["batch"] if sequences else []:
                    if theirs_batched is None:  # each sequence gets n_ctx / n_seq_max positions
                        per_sequence = (b["position"] + DECODE_TOKENS + 255) // 256 * 256
                        theirs_batched = LlamaCpp(llama_cpp, path, args.threads, clock,
                                                  n_ctx=per_sequence * max(sequences), n_seq_max=max(sequences))
                    f = figures.setdefault(f"batch {b['sequences']} @{b['position']}", ([], []))
                    f[0].append(b["tokens_per_s"])
                    f[1].append(theirs_batched.batch_tokens_per_s(b["position"], b["sequences"], args.repeats))
        finally:
            theirs.close()
            if theirs_batched:
                theirs_batched.close()
        for what, (a, b) in figures.items():
            rows.append({"model": name, "what": what, "ours": statistics.median(a), "llama.cpp": statistics.median(b)})
        streamed = ", ".join("%.2f GB/s at %d" % (d["weight_bytes_per_s"] / 1e9, d["position"]) for d in mine["decode"])
        print(f"{name}: memory read bandwidth {mine['memory_read_bytes_per_s'] / 1e9:.2f} GB/s; "
              f"weights streamed while decoding: {streamed}", file=sys.stderr)

    if args.json:
        print(json.dumps(rows, indent=1))
        return
    clock = "process CPU time" if args.cpu_time else "wall clock"
    print(f"threads: {args.threads}; tok/s by {clock}, median of {args.repeats}, median over {args.rounds} rounds in turn")
    print(f"{'model':<10} {'row':<14} {'ours':>10} {'llama.cpp':>10} {'ratio':>7}")
    for r in rows:
        print(f"{r['model']:<10} {r['what']:<14} {r['ours']:>10.1f} {r['llama.cpp']:>10.1f} "
              f"{r['ours'] / r['llama.cpp']:>7.2f}")


if __name__ == "__main__":
    main()
