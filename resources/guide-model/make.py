#!/usr/bin/env python3
"""Regenerates LlamaDesk Guide from nothing but this folder: corpus, tokenizer, model, GGUF, scores.

  pip install torch sentencepiece        # tools for making the model, not for LlamaDesk
  cmake --build build                    # llamadesk-convert and llamadesk-cli
  python3 resources/guide-model/make.py [--build build]

Steps (work files in resources/guide-model/work/, which git ignores):
  1. generate_corpus.py: training dialogues (seed 1) and validation dialogues (seed 2) from facts.json;
  2. train.py: SentencePiece tokenizer, then the model, written as a Meta folder (torch.save);
  3. llamadesk-convert: the Meta folder as llamadesk-guide.gguf (F16, vocabulary and chat template in);
  4. evaluate.py: the held-out score and perplexity with llamadesk-cli, into results.json.
"""
import argparse
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))


def run(*cmd):
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--threads", default="2")
    args = ap.parse_args()
    work = os.path.join(HERE, "work")
    os.makedirs(work, exist_ok=True)
    py = sys.executable
    started = time.time()

    corpus, text = os.path.join(work, "corpus.jsonl"), os.path.join(work, "corpus.txt")
    validation, validation_text = os.path.join(work, "validation.jsonl"), os.path.join(work, "validation.txt")
    run(py, os.path.join(HERE, "generate_corpus.py"), "--out", corpus, "--text", text)
    run(py, os.path.join(HERE, "generate_corpus.py"), "--seed", "2", "--dialogues", "1000",
        "--out", validation, "--text", validation_text)
    run(py, os.path.join(HERE, "train.py"), "--corpus", corpus, "--validation", validation, "--text", text,
        "--out", work, "--threads", args.threads)
    gguf = os.path.join(HERE, "llamadesk-guide.gguf")
    run(os.path.join(args.build, "engine/tools/convert/llamadesk-convert"), "--model", os.path.join(work, "meta"),
        "--out", gguf, "--dtype", "f16", "--name", "LlamaDesk Guide",
        "--chat-template", os.path.join(HERE, "chat_template.jinja"))
    run(py, os.path.join(HERE, "evaluate.py"), "--model", gguf, "--cli",
        os.path.join(args.build, "engine/tools/cli/llamadesk-cli"), "--dev", os.path.join(HERE, "dev.json"), "--validation-text", validation_text,
        "--train-log", os.path.join(work, "train_log.json"), "--out", os.path.join(HERE, "results.json"))
    print(f"done in {(time.time() - started) / 60:.1f} min")


if __name__ == "__main__":
    main()
