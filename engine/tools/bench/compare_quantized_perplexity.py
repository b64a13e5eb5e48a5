#!/usr/bin/env python3
"""Quantized files scored by both programs: a real small model is widened to K-quant shapes
(llamadesk-widen: same function, rows of 256 and 512), then for each type or mix

  llama.cpp's file   llama.cpp's own quantizer (llama_model_quantize) makes it from the widened F32
                     GGUF, so its blocks are exactly what people download;
  our file           llamadesk-widen --dtype stores the same model with our reference quantizers;

and llamadesk-cli --perplexity and llama.cpp (compare_perplexity.py's windows and forward pass) score
each file on the same text and tokens. The mean NLLs of the two programs on one file should agree
within 0.02 (they read the same blocks); the two files' figures show how our quantizer compares
with llama.cpp's. It also reports whether both files give each tensor the same type: single types
are quantized by llama.cpp with `pure` (one type everywhere, as WeightMix does), the _M mixes with
llama.cpp's recipe.

usage: compare_quantized_perplexity.py --cli build/engine/tools/cli/llamadesk-cli
       --widen build/engine/tools/quant/llamadesk-widen
       [--model ../shared/models/stories260K/stories260K.gguf] [--dim 256 --hidden 512]
       [--text tests/data/perplexity_story.txt] [--types q8_0,q4_k_m,...] [--threads 2] [--keep DIR]
       [--tolerance 0.02] [--json]
Exits with status 1 when the two programs differ by more than the tolerance on any file.
"""

import argparse
import ctypes
import json
import os
import subprocess
import sys
import tempfile

from compare_perplexity import LlamaCpp, our_tokens, ours, windows

# Our mix name -> llama.cpp file type, and whether llama.cpp quantizes it "pure" (one type).
MIXES = {
    "q8_0": ("LLAMA_FTYPE_MOSTLY_Q8_0", True), "q6_k": ("LLAMA_FTYPE_MOSTLY_Q6_K", True),
    "q5_1": ("LLAMA_FTYPE_MOSTLY_Q5_1", True), "q5_0": ("LLAMA_FTYPE_MOSTLY_Q5_0", True),
    "q4_1": ("LLAMA_FTYPE_MOSTLY_Q4_1", True), "q4_0": ("LLAMA_FTYPE_MOSTLY_Q4_0", True),
    "q5_k_m": ("LLAMA_FTYPE_MOSTLY_Q5_K_M", False), "q4_k_m": ("LLAMA_FTYPE_MOSTLY_Q4_K_M", False),
}


def tensor_types(path):
    from gguf import GGUFReader
    return {t.name: t.tensor_type.name for t in GGUFReader(path).tensors}


def type_differences(ours_path, theirs_path):
    a, b = tensor_types(ours_path), tensor_types(theirs_path)
    return [f"{n}: ours {a.get(n)}, llama.cpp {b.get(n)}" for n in sorted(set(a) | set(b)) if a.get(n) != b.get(n)]


def llama_cpp_nll(llama_cpp, np, path, tokens, context, threads):
    lc = LlamaCpp(llama_cpp, np, path, context, threads)
    try:
        return sum(lc.nll_sum(w) for w in windows(tokens, context)) / (len(tokens) - 1)
    finally:
        lc.close()


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.normpath(os.path.join(here, "../../.."))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", required=True, help="path of llamadesk-cli")
    ap.add_argument("--widen", required=True, help="path of llamadesk-widen")
    ap.add_argument("--model", default=os.path.join(root, "../shared/models/stories260K/stories260K.gguf"),
                    help="a GGUF with its vocabulary (llama.cpp needs one)")
    ap.add_argument("--dim", type=int, default=256)
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--text", default=os.path.join(root, "tests/data/perplexity_story.txt"))
    ap.add_argument("--types", default=",".join(MIXES), help="comma-separated, from " + ", ".join(MIXES))
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--keep", help="write the files into this folder and keep them")
    ap.add_argument("--tolerance", type=float, default=0.02,
                    help="exit with status 1 when the programs' mean NLLs on one file differ by more")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args()

    import llama_cpp  # imported late so --help works without them
    import numpy as np

    llama_cpp.llama_backend_init()
    quiet = llama_cpp.llama_log_callback(lambda level, msg, data: None)
    llama_cpp.llama_log_set(quiet, ctypes.c_void_p())

    folder = args.keep or tempfile.mkdtemp(prefix="llamadesk-quant-")
    os.makedirs(folder, exist_ok=True)
    stem = os.path.splitext(os.path.basename(args.model))[0] + f"-{args.dim}x{args.hidden}"

    def widen(dtype):
        out = os.path.join(folder, f"{stem}-{dtype}-llamadesk.gguf")
        subprocess.run([args.widen, "--model", args.model, "--dim", str(args.dim), "--hidden", str(args.hidden),
                        "--dtype", dtype, "--out", out], check=True, capture_output=True)
        return out

    def score(path, tokens):
        mine = ours(args.cli, path, args.text, args.threads)
        theirs = llama_cpp_nll(llama_cpp, np, path, tokens, mine["context"], args.threads)
        return {"file": path, "ours": mine["mean_nll"], "llama.cpp": theirs, "difference": mine["mean_nll"] - theirs}

    with open(args.text, encoding="utf-8") as f:
        text = f.read()
    f32 = widen("f32")
    tokens = our_tokens(args.cli, f32, text)
    rows = {"f32": {"llama.cpp file": score(f32, tokens)}}
    for mix in args.types.split(","):
        ftype, pure = MIXES[mix]
        theirs_path = os.path.join(folder, f"{stem}-{mix}-llama.cpp.gguf")
        params = llama_cpp.llama_model_quantize_default_params()
        params.ftype = getattr(llama_cpp, ftype)
        params.pure = pure
        params.nthread = args.threads
        if llama_cpp.llama_model_quantize(f32.encode(), theirs_path.encode(), ctypes.byref(params)) != 0:
            sys.exit(f"llama.cpp could not quantize {f32} to {mix}")
        ours_path = widen(mix)
        rows[mix] = {"llama.cpp file": score(theirs_path, tokens), "our file": score(ours_path, tokens),
                     "type differences": type_differences(ours_path, theirs_path)}

    scores = [s for r in rows.values() for k, s in r.items() if k.endswith("file")]
    worst = max(abs(s["difference"]) for s in scores)
    if args.json:
        print(json.dumps({"model": args.model, "dim": args.dim, "hidden": args.hidden, "text": args.text,
                          "tokens": len(tokens) - 1, "rows": rows, "largest_difference": worst}, indent=1))
        sys.exit(1 if worst > args.tolerance else 0)
    print(f"{os.path.basename(args.model)} widened to dim {args.dim}, hidden {args.hidden}; {len(tokens) - 1} tokens of "
          f"{os.path.basename(args.text)}; mean NLL (nats/token)")
    print(f"{'':<8} {'llama.cpp-quantized file':^34} {'LlamaDesk-quantized file':^34}")
    print(f"{'type':<8} {'ours':>10} {'llama.cpp':>10} {'diff':>12} {'ours':>10} {'llama.cpp':>10} {'diff':>12}  types")
    for mix, r in rows.items():
        a = r["llama.cpp file"]
        line = f"{mix:<8} {a['ours']:>10.5f} {a['llama.cpp']:>10.5f} {a['difference']:>+12.2e}"
        if "our file" in r:
            b = r["our file"]
            same = "same" if not r["type differences"] else f"{len(r['type differences'])} differ"
            line += f" {b['ours']:>10.5f} {b['llama.cpp']:>10.5f} {b['difference']:>+12.2e}  {same}"
        print(line)
    for mix, r in rows.items():
        for d in r.get("type differences", []):
            print(f"  {mix}: {d}")
    print(f"largest |ours - llama.cpp| {worst:.2e} (tolerance {args.tolerance}); files in {folder}")
    sys.exit(1 if worst > args.tolerance else 0)


if __name__ == "__main__":
    main()
