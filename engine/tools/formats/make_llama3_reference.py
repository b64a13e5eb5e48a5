#!/usr/bin/env python3
"""Records what llama.cpp and transformers make of one Llama 3-shaped model, for
tests/engine/engine/test_llama3_reference.cpp, which runs in CI without Python.

The model is llamadesk-bench's synthetic `llama3-test` shape (dim 256, 2 layers, 4 heads, 2 kv heads,
rope_theta 500000, Llama 3.1 RoPE scaling) with the real 128256-token Llama 3 vocabulary
(../shared/llama3/ggml-vocab-llama-bpe.gguf), written with seed 1 as:
  - GGUF in F32, F16, Q8_0 and Q4_K_M: the reference is llama.cpp (PyPI llama-cpp-python);
  - a Hugging Face folder (tokenizer.json only) in F32 with its own classifier and in BF16 with tied
    embeddings, and a Meta folder (params.json with use_scaled_rope, tiktoken tokenizer.model) of the
    same weights: the reference is transformers' LlamaForCausalLM, in float32 (BF16 weights are
    widened, which is what LlamaDesk computes with).
For each it records the prompt's ids, the greedy answer's ids with each step's margin (top logit minus
the runner-up: a small one means two programs may rightly pick differently), and the mean negative
log-likelihood of tests/data/perplexity_story.txt in one window, as llamadesk-cli --perplexity scores it.

With --convert it also checks files that llama.cpp itself writes, which CI cannot make: the HF folder
through llama.cpp's convert_hf_to_gguf.py (F32, F16, Q8_0) and llama_model_quantize (Q4_K_M), each read
by llamadesk-cli and by llama.cpp, and prints the comparison (nothing of it is recorded).

  python3 engine/tools/formats/make_llama3_reference.py --bench build/engine/tools/bench/llamadesk-bench \\
      --cli build/engine/tools/cli/llamadesk-cli [--convert PATH/convert_hf_to_gguf.py]
"""
import argparse
import ctypes
import json
import math
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "../../.."))
sys.path.insert(0, os.path.join(HERE, "../bench"))
from compare_perplexity import LlamaCpp  # noqa: E402  (one llama.cpp driver for both scripts)

PROMPT = "The capital of France is"
ANSWER_TOKENS = 24
CONTEXT = 2048
END_OF_GENERATION = {128001, 128008, 128009}

# name: (writer flag, dtype, tied, reference); meta-f32 holds hf-f32's weights
VARIANTS = {
    "gguf-f32": ("--write-gguf", "f32", False, "llama.cpp"),
    "gguf-f16": ("--write-gguf", "f16", False, "llama.cpp"),
    "gguf-q8_0": ("--write-gguf", "q8_0", False, "llama.cpp"),
    "gguf-q4_k_m": ("--write-gguf", "q4_k_m", False, "llama.cpp"),
    "hf-f32": ("--write-hf", "f32", False, "transformers"),
    "hf-bf16-tied": ("--write-hf", "bf16", True, "transformers"),
    "meta-f32": ("--write-meta", "f32", False, "transformers"),
}


def write(bench, vocab, flag, dtype, tied, path):
    cmd = [bench, "--synthetic", "llama3-test", "--vocab", vocab, "--dtype", dtype, flag, path]
    subprocess.run(cmd + ([] if tied else ["--untied"]), check=True, capture_output=True)


def our_ids(cli, model, text):
    out = subprocess.run([cli, "--model", model, "--tokenize", text], check=True, capture_output=True, text=True)
    return [int(t) for t in out.stdout.split()]


def ours_greedy(cli, model):
    out = subprocess.run([cli, "--model", model, "--prompt", PROMPT, "-n", str(ANSWER_TOKENS), "--temperature", "0"],
                         check=True, capture_output=True, text=True)
    return out.stdout


def ours_nll(cli, model, text_path):
    out = subprocess.run([cli, "--model", model, "--perplexity", text_path, "--json"],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout)["mean_nll"]


def greedy_with_margins(next_logits, prompt):
    """next_logits(ids) -> float64 logits after ids; greedy until an end of generation or the count."""
    ids, answer, margins = list(prompt), [], []
    for _ in range(ANSWER_TOKENS):
        row = next_logits(ids)
        top2 = row.argsort()[-2:]
        best = int(top2[1])
        margins.append(float(row[top2[1]] - row[top2[0]]))
        answer.append(best)
        if best in END_OF_GENERATION:
            break
        ids.append(best)
    return answer, margins


def mean_nll(all_logits, ids):
    """all_logits(ids) -> (len(ids), vocab) float64; mean of -log p(ids[i] | ids[:i]) for i >= 1."""
    import numpy as np
    rows = all_logits(ids[:-1])
    top = rows.max(axis=1, keepdims=True)
    logz = top[:, 0] + np.log(np.exp(rows - top).sum(axis=1))
    return float((logz - rows[np.arange(len(ids) - 1), ids[1:]]).mean())


class LlamaCppModel:
    def __init__(self, path):
        import llama_cpp
        import numpy as np
        self.np = np
        self.m = LlamaCpp(llama_cpp, np, path, CONTEXT, os.cpu_count())

    def all_logits(self, ids):
        m, np = self.m, self.np
        m.l.llama_memory_clear(m.l.llama_get_memory(m.ctx), True)
        b = m.batch
        for i, t in enumerate(ids):
            b.token[i], b.pos[i], b.n_seq_id[i], b.logits[i] = t, i, 1, 1
            b.seq_id[i][0] = 0
        b.n_tokens = len(ids)
        if m.l.llama_decode(m.ctx, b) != 0:
            raise RuntimeError("llama_decode failed")
        return np.stack([np.ctypeslib.as_array(m.l.llama_get_logits_ith(m.ctx, i), shape=(m.n_vocab,)).astype(np.float64)
                         for i in range(len(ids))])

    def next_logits(self, ids):
        return self.all_logits(ids)[-1]


class TransformersModel:
    def __init__(self, path):
        import torch
        from transformers import LlamaForCausalLM
        self.torch = torch
        self.model = LlamaForCausalLM.from_pretrained(path, dtype=torch.float32).eval()

    def all_logits(self, ids):
        with self.torch.no_grad():
            return self.model(self.torch.tensor([ids])).logits[0].double().numpy()

    def next_logits(self, ids):
        return self.all_logits(ids)[-1]


def versions():
    out = {}
    try:
        import llama_cpp
        out["llama.cpp"] = "llama-cpp-python " + llama_cpp.__version__
    except ImportError:
        pass
    try:
        import torch
        import transformers
        out["transformers"] = f"transformers {transformers.__version__}, torch {torch.__version__}"
    except ImportError:
        pass
    return out


def convert_check(args, work, text, hf_dir):
    """llama.cpp's own GGUF files of hf_dir's weights, read by both programs."""
    import llama_cpp
    files = {}
    for outtype in ("f32", "f16", "q8_0"):
        path = os.path.join(work, f"convert-{outtype}.gguf")
        subprocess.run([sys.executable, args.convert, hf_dir, "--outtype", outtype, "--outfile", path],
                       check=True, capture_output=True)
        files[outtype] = path
    q4 = os.path.join(work, "convert-q4_k_m.gguf")
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = llama_cpp.LLAMA_FTYPE_MOSTLY_Q4_K_M
    if llama_cpp.llama_model_quantize(files["f16"].encode(), q4.encode(), ctypes.byref(params)) != 0:
        raise RuntimeError("llama_model_quantize failed")
    files["q4_k_m"] = q4
    print("\nllama.cpp's own GGUF files (convert_hf_to_gguf.py, llama_model_quantize), read by both programs:")
    print(f"{'file':<10} {'prompt ids':>10} {'greedy ids':>10} {'first diff':>10} {'min margin':>10} "
          f"{'nll ours':>10} {'nll llama.cpp':>13} {'|diff|':>9}")
    for name, path in files.items():
        ref = LlamaCppModel(path)
        prompt = our_ids(args.cli, path, PROMPT)
        same_prompt = prompt == ref.m.tokenize(PROMPT)
        answer, margins = greedy_with_margins(ref.next_logits, prompt)
        ours = ours_greedy(args.cli, path)
        theirs = PROMPT + "".join(token_text(ref.m, t) for t in answer if t not in END_OF_GENERATION)
        first = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), None)
        ids = our_ids(args.cli, path, text)
        nll_ref = mean_nll(ref.all_logits, ids)
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False, encoding="utf-8") as f:
            f.write(text)
        nll = ours_nll(args.cli, path, f.name)
        os.unlink(f.name)
        ref.m.close()
        print(f"{name:<10} {'same' if same_prompt else 'DIFFER':>10} {'same' if ours == theirs else 'DIFFER':>10} "
              f"{'-' if first is None else 'char ' + str(first):>10} {min(margins):>10.4f} {nll:>10.6f} {nll_ref:>13.6f} "
              f"{abs(nll - nll_ref):>9.2e}")


def token_text(m, token):
    buf = ctypes.create_string_buffer(256)
    n = m.l.llama_token_to_piece(m.vocab, token, buf, len(buf), 0, False)
    return buf.raw[:max(n, 0)].decode("utf-8", errors="replace")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", required=True, help="path of llamadesk-bench")
    ap.add_argument("--cli", required=True, help="path of llamadesk-cli")
    ap.add_argument("--vocab", default=os.path.join(ROOT, "../shared/llama3/ggml-vocab-llama-bpe.gguf"))
    ap.add_argument("--text", default=os.path.join(ROOT, "tests/data/perplexity_story.txt"))
    ap.add_argument("--out", default=os.path.join(ROOT, "tests/data/reference/llama3-test.json"))
    ap.add_argument("--convert", help="llama.cpp's convert_hf_to_gguf.py: also check the files it writes")
    args = ap.parse_args()
    with open(args.text, encoding="utf-8") as f:
        text = f.read()

    import llama_cpp
    llama_cpp.llama_backend_init()
    quiet = llama_cpp.llama_log_callback(lambda level, msg, data: None)
    llama_cpp.llama_log_set(quiet, ctypes.c_void_p())
    from transformers.utils import logging as transformers_logging
    transformers_logging.set_verbosity_error()

    record = {"made_by": "engine/tools/formats/make_llama3_reference.py", "versions": versions(),
              "shape": "llama3-test", "seed": 1, "prompt": PROMPT, "answer_tokens": ANSWER_TOKENS,
              "text": os.path.relpath(args.text, ROOT), "variants": {}}
    with tempfile.TemporaryDirectory() as work:
        for name, (flag, dtype, tied, reference) in VARIANTS.items():
            path = os.path.join(work, name + (".gguf" if flag == "--write-gguf" else ""))
            write(args.bench, args.vocab, flag, dtype, tied, path)
            if reference == "llama.cpp":
                model = LlamaCppModel(path)
            else:  # transformers reads the HF folder of the same weights
                hf = path if flag == "--write-hf" else os.path.join(work, name + "-as-hf")
                if hf != path:
                    write(args.bench, args.vocab, "--write-hf", dtype, tied, hf)
                model = TransformersModel(hf)
            prompt = our_ids(args.cli, path, PROMPT)
            if reference == "llama.cpp" and model.m.tokenize(PROMPT) != prompt:
                sys.exit(f"{name}: llama.cpp tokenizes the prompt as {model.m.tokenize(PROMPT)}, we as {prompt}")
            answer, margins = greedy_with_margins(model.next_logits, prompt)
            nll = mean_nll(model.all_logits, our_ids(args.cli, path, text))
            record["variants"][name] = {"format": flag[len("--write-"):], "dtype": dtype, "tied": tied,
                                        "reference": reference, "prompt_ids": prompt, "greedy_ids": answer,
                                        "margins": [round(m, 4) for m in margins], "mean_nll": round(nll, 7)}
            print(f"{name:<14} {reference:<12} answer {len(answer)} tokens, min margin {min(margins):.4f}, "
                  f"mean nll {nll:.6f}")
            if reference == "llama.cpp":
                model.m.close()
        if args.convert:
            hf = os.path.join(work, "convert-source")
            write(args.bench, args.vocab, "--write-hf", "f32", False, hf)
            convert_check(args, work, text, hf)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(record, f, indent=1)
        f.write("\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
