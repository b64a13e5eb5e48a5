#!/usr/bin/env python3
"""Scores LlamaDesk Guide on heldout.json with LlamaDesk's own engine (llamadesk-cli --chat, greedy).

heldout.json is the test set; dev.json (--dev), looked at while tuning, is scored apart.
Each item is one conversation; every turn is asked in order and its answer must contain one of the
turn's expected strings (case-insensitive). The score is the share of turns answered correctly,
overall and per kind (single questions, follow-ups, questions to decline). Also runs
llamadesk-cli --perplexity on the validation dialogues, and copies the trainer's figures.

  python3 evaluate.py --model llamadesk-guide.gguf --cli build/engine/tools/cli/llamadesk-cli \
      [--validation-text work/validation.txt] [--train-log work/train_log.json] [--out results.json]
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def ask(cli, model, questions, threads):
    """The answers to one conversation's questions, in order (None where the CLI gave none)."""
    run = subprocess.run([cli, "--model", model, "--chat", "--temperature", "0", "-n", "160",
                          "--threads", str(threads)],
                         input="".join(q + "\n" for q in questions), capture_output=True, text=True, timeout=300)
    if run.returncode != 0:
        raise SystemExit(f"llamadesk-cli failed: {run.stderr.strip()}")
    answers = run.stdout.split("\n")[:len(questions)]
    return answers + [None] * (len(questions) - len(answers))


def score(cli, model, items, threads, label):
    """Asks every item's turns in one conversation each; the share answered correctly, per kind too."""
    transcripts, by_kind = [], {}
    for item in items:
        questions = [t["user"] for t in item["turns"]]
        answers = ask(cli, model, questions, threads)
        turns = []
        for turn, answer in zip(item["turns"], answers):
            ok = answer is not None and any(e.lower() in answer.lower() for e in turn["expect"])
            turns.append({"user": turn["user"], "answer": answer, "expect": turn["expect"], "correct": ok})
            right, total = by_kind.get(item["kind"], (0, 0))
            by_kind[item["kind"]] = (right + ok, total + 1)
            print(f"{'ok  ' if ok else 'MISS'} [{item['kind']}] {turn['user']}\n     -> {answer}", flush=True)
        transcripts.append({"kind": item["kind"], "turns": turns})
    right = sum(r for r, _ in by_kind.values())
    total = sum(t for _, t in by_kind.values())
    print(f"{label} score: {right}/{total} = {100 * right / total:.1f} %  " +
          ", ".join(f"{k} {r}/{t}" for k, (r, t) in by_kind.items()))
    return {"correct": right, "turns": total, "score": right / total,
            "by_kind": {k: {"correct": r, "turns": t, "score": r / t} for k, (r, t) in by_kind.items()},
            "transcripts": transcripts}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--model", default=os.path.join(HERE, "llamadesk-guide.gguf"))
    ap.add_argument("--cli", required=True)
    ap.add_argument("--heldout", default=os.path.join(HERE, "heldout.json"))
    ap.add_argument("--dev", help="a development set, scored but reported apart (dev.json)")
    ap.add_argument("--validation-text")
    ap.add_argument("--train-log")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out")
    args = ap.parse_args()
    with open(args.heldout) as f:
        items = json.load(f)["items"]

    results = {"model": os.path.basename(args.model)}
    results.update(score(args.cli, args.model, items, args.threads, "held-out"))
    if args.dev:
        with open(args.dev) as f:
            dev = score(args.cli, args.model, json.load(f)["items"], args.threads, "development")
        results["development"] = {k: v for k, v in dev.items() if k != "transcripts"}

    if args.validation_text:
        run = subprocess.run([args.cli, "--model", args.model, "--perplexity", args.validation_text, "--json",
                              "--threads", str(args.threads)], capture_output=True, text=True, check=True)
        results["validation_perplexity_all_tokens"] = json.loads(run.stdout)
        print(f"validation perplexity (every token, llamadesk-cli): {results['validation_perplexity_all_tokens']['perplexity']:.3f}")
    if args.train_log:
        with open(args.train_log) as f:
            log = json.load(f)
        results["training"] = {k: v for k, v in log.items() if k != "log"}
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=2, ensure_ascii=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
