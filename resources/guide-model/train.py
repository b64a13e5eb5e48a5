#!/usr/bin/env python3
"""Trains LlamaDesk Guide: a SentencePiece tokenizer, then a Llama-2-architecture model, on CPU.

The model follows Meta's llama/model.py (RMSNorm, interleaved rotary pairs, grouped-query
attention, SwiGLU) so the weights load unchanged as a Meta checkpoint. Rows of 1024 tokens are
packed from whole dialogues; the loss counts only answer tokens and their EOS. Everything is seeded.
Two things only training sees, so the exported model is the same shape: dropout on the residual
branches, and user-turn noise (a share of the user's tokens swapped for random pieces each step), so
the model learns to answer from the words it knows in wording it has not seen.
Writes OUT/tokenizer.model, OUT/meta/{params.json, consolidated.00.pth, tokenizer.model} and
OUT/train_log.json. PyTorch is a tool for making the model, never a dependency of LlamaDesk.

  python3 train.py --corpus corpus.jsonl --validation validation.jsonl --text text.txt --out OUT
"""
import argparse
import json
import math
import os
import random
import shutil
import time

import sentencepiece as spm
import torch
import torch.nn as nn
import torch.nn.functional as F

# The shape: dim and FFN width are multiples of 256 (K-quant rows), 8 query heads share 2 kv heads.
SHAPE = dict(dim=256, n_layers=6, n_heads=8, n_kv_heads=2, vocab_size=2048, multiple_of=256,
             norm_eps=1e-5, rope_theta=10000.0, max_seq_len=1024)


def ffn_width(dim, multiple_of):
    """Meta's formula in model.py: two thirds of 4*dim, rounded up to multiple_of."""
    hidden = int(2 * 4 * dim / 3)
    return multiple_of * ((hidden + multiple_of - 1) // multiple_of)


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotary_table(head_dim, n, theta):
    freqs = 1.0 / (theta ** (torch.arange(0, head_dim, 2).float() / head_dim))
    angles = torch.outer(torch.arange(n).float(), freqs)
    return torch.cos(angles), torch.sin(angles)


def rotate(x, cos, sin):
    """Rotates consecutive pairs (x[2i], x[2i+1]) as model.py's complex product does."""
    x0, x1 = x[..., 0::2], x[..., 1::2]
    return torch.stack((x0 * cos - x1 * sin, x0 * sin + x1 * cos), dim=-1).flatten(-2)


class Block(nn.Module):
    def __init__(self, s, dropout=0.0):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.n_heads, self.n_kv_heads = s["n_heads"], s["n_kv_heads"]
        self.head_dim = s["dim"] // s["n_heads"]
        dim, hidden = s["dim"], ffn_width(s["dim"], s["multiple_of"])
        self.wq = nn.Linear(dim, self.n_heads * self.head_dim, bias=False)
        self.wk = nn.Linear(dim, self.n_kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(dim, self.n_kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(self.n_heads * self.head_dim, dim, bias=False)
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)
        self.attention_norm = RMSNorm(dim, s["norm_eps"])
        self.ffn_norm = RMSNorm(dim, s["norm_eps"])

    def forward(self, x, cos, sin):
        b, t, _ = x.shape
        h = self.attention_norm(x)
        q = self.wq(h).view(b, t, self.n_heads, self.head_dim)
        k = self.wk(h).view(b, t, self.n_kv_heads, self.head_dim)
        v = self.wv(h).view(b, t, self.n_kv_heads, self.head_dim)
        q, k = rotate(q, cos, sin), rotate(k, cos, sin)
        # repeat_kv: kv head j serves query heads j*n_rep ... (j+1)*n_rep - 1
        n_rep = self.n_heads // self.n_kv_heads
        k = k.repeat_interleave(n_rep, dim=2)
        v = v.repeat_interleave(n_rep, dim=2)
        a = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                           is_causal=True)
        x = x + self.drop(self.wo(a.transpose(1, 2).reshape(b, t, -1)))
        h = self.ffn_norm(x)
        return x + self.drop(self.w2(F.silu(self.w1(h)) * self.w3(h)))


class Transformer(nn.Module):
    def __init__(self, s, dropout=0.0):
        super().__init__()
        self.tok_embeddings = nn.Embedding(s["vocab_size"], s["dim"])
        self.layers = nn.ModuleList(Block(s, dropout) for _ in range(s["n_layers"]))
        self.norm = RMSNorm(s["dim"], s["norm_eps"])
        self.output = nn.Linear(s["dim"], s["vocab_size"], bias=False)
        cos, sin = rotary_table(s["dim"] // s["n_heads"], s["max_seq_len"], s["rope_theta"])
        self.register_buffer("cos", cos[:, None, :], persistent=False)
        self.register_buffer("sin", sin[:, None, :], persistent=False)
        for name, p in self.named_parameters():
            if p.dim() == 2:
                # GPT-2's scaled init for the projections that add into the residual stream
                std = 0.02 / math.sqrt(2 * s["n_layers"]) if name.endswith(("wo.weight", "w2.weight")) else 0.02
                nn.init.normal_(p, mean=0.0, std=std)

    def forward(self, tokens):
        t = tokens.shape[1]
        x = self.tok_embeddings(tokens)
        for layer in self.layers:
            x = layer(x, self.cos[:t], self.sin[:t])
        return self.output(self.norm(x))

    def meta_state_dict(self):
        """The weights under Meta's key names (layers.N.attention.wq.weight, ...feed_forward.w1...)."""
        group = {"wq": "attention", "wk": "attention", "wv": "attention", "wo": "attention",
                 "w1": "feed_forward", "w2": "feed_forward", "w3": "feed_forward"}
        out = {}
        for key, value in self.state_dict().items():
            parts = key.split(".")
            if parts[0] == "layers" and parts[2] in group:
                parts.insert(2, group[parts[2]])
            out[".".join(parts)] = value.detach().clone().float()
        return out


def train_tokenizer(text, out_prefix, vocab_size):
    spm.SentencePieceTrainer.train(
        input=text, model_prefix=out_prefix, model_type="bpe", vocab_size=vocab_size,
        byte_fallback=True, character_coverage=1.0, normalization_rule_name="identity",
        add_dummy_prefix=True, remove_extra_whitespaces=False, split_digits=True,
        unk_id=0, bos_id=1, eos_id=2, pad_id=-1, num_threads=2, minloglevel=2,
        max_sentence_length=16384, shuffle_input_sentence=False)
    return spm.SentencePieceProcessor(model_file=out_prefix + ".model")


def encode_dialogue(sp, d):
    """Token ids, loss mask and user-token mask of one dialogue, turn by turn as LlamaDesk renders the
    Llama 2 chat template (engine/src/chat/chat_template.cpp): BOS [INST] user [/INST], then answer + ' ' EOS.
    The user-token mask marks the pieces of the user's own words (not the tags, not a system prompt)."""
    ids, mask, user_mask = [], [], []
    for i, t in enumerate(d["turns"]):
        user = t["user"].strip()
        head = "[INST] "
        if i == 0 and d["system"]:
            head = f"[INST] <<SYS>>\n{d['system']}\n<</SYS>>\n\n"
        prompt = [sp.bos_id()] + sp.encode(f"{head}{user} [/INST]")
        # pieces never cross a space, so the tags' pieces are those of the tags alone
        n_head, n_tail = 1 + len(sp.encode(head.rstrip())), len(sp.encode("[/INST]"))
        in_user = [0] * n_head + [1] * (len(prompt) - n_head - n_tail) + [0] * n_tail
        answer = sp.encode(t["answer"].strip() + " ") + [sp.eos_id()]
        ids += prompt + answer
        mask += [0] * len(prompt) + [1] * len(answer)
        user_mask += in_user + [0] * len(answer)
    return ids, mask, user_mask


def pack(encoded, seq_len, rng):
    """Whole dialogues packed into rows of seq_len + 1 tokens (input and shifted target)."""
    order = list(range(len(encoded)))
    rng.shuffle(order)
    rows, row_ids, row_mask, row_user = [], [], [], []
    for i in order:
        ids, mask, user = encoded[i]
        if len(row_ids) + len(ids) > seq_len + 1:
            pad = seq_len + 1 - len(row_ids)
            rows.append((row_ids + [2] * pad, row_mask + [0] * pad, row_user + [0] * pad))
            row_ids, row_mask, row_user = [], [], []
        row_ids, row_mask, row_user = row_ids + ids, row_mask + mask, row_user + user
    return rows


def batches(rows, batch_size):
    ids = torch.tensor([r[0] for r in rows])
    mask = torch.tensor([r[1] for r in rows], dtype=torch.float32)
    user = torch.tensor([r[2] for r in rows], dtype=torch.bool)
    for i in range(0, len(rows) - batch_size + 1, batch_size):
        yield ids[i:i + batch_size], mask[i:i + batch_size], user[i:i + batch_size]


def with_user_noise(ids, user, p, vocab_size):
    """The inputs with a share p of the user's tokens swapped for random non-special pieces."""
    swap = user & (torch.rand(ids.shape) < p)
    return torch.where(swap, torch.randint(3, vocab_size, ids.shape), ids)


def masked_loss(model, ids, mask, inputs=None):
    logits = model((ids if inputs is None else inputs)[:, :-1])
    losses = F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), ids[:, 1:].reshape(-1), reduction="none")
    m = mask[:, 1:].reshape(-1)
    return (losses * m).sum() / m.sum(), m.sum()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--validation", required=True)
    ap.add_argument("--text", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--steps", type=int, default=1100)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--dropout", type=float, default=0.1, help="on the residual branches, training only")
    ap.add_argument("--user-noise", type=float, default=0.1,
                    help="share of user tokens swapped for random pieces each step, training only")
    args = ap.parse_args()
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    rng = random.Random(args.seed)
    os.makedirs(args.out, exist_ok=True)
    started = time.time()

    sp = train_tokenizer(args.text, os.path.join(args.out, "tokenizer"), SHAPE["vocab_size"])
    load = lambda path: [json.loads(line) for line in open(path)]
    train_set = [encode_dialogue(sp, d) for d in load(args.corpus)]
    val_set = [encode_dialogue(sp, d) for d in load(args.validation)]
    seq_len = SHAPE["max_seq_len"]
    val_rows = pack(val_set, seq_len, random.Random(0))
    print(f"tokenizer {SHAPE['vocab_size']} pieces; {sum(len(e[0]) for e in train_set)} training tokens "
          f"in {len(train_set)} dialogues; {time.time() - started:.0f} s", flush=True)

    model = Transformer(SHAPE, args.dropout)
    n_params = sum(p.numel() for p in model.parameters())
    decay = [p for p in model.parameters() if p.dim() == 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=args.lr, betas=(0.9, 0.95), fused=False)
    warmup = max(1, args.steps // 20)
    lr_at = lambda s: args.lr * (s + 1) / warmup if s < warmup else \
        args.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * (s - warmup) / max(1, args.steps - warmup))))

    def validate():
        model.eval()
        total, count = 0.0, 0.0
        with torch.no_grad():
            for ids, mask, _ in batches(val_rows, args.batch):
                loss, n = masked_loss(model, ids, mask)
                total, count = total + float(loss) * float(n), count + float(n)
        model.train()
        return total / count

    log = []
    step, epoch = 0, 0
    train_started = time.time()
    while step < args.steps:
        for ids, mask, user in batches(pack(train_set, seq_len, rng), args.batch):
            if step >= args.steps:
                break
            for group in opt.param_groups:
                group["lr"] = lr_at(step)
            inputs = with_user_noise(ids, user, args.user_noise, SHAPE["vocab_size"]) if args.user_noise else None
            loss, _ = masked_loss(model, ids, mask, inputs)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            step += 1
            if step % 25 == 0 or step == 1:
                elapsed = time.time() - train_started
                print(f"step {step}/{args.steps} epoch {epoch} loss {loss.item():.4f} lr {lr_at(step):.2e} "
                      f"{elapsed / step:.2f} s/step", flush=True)
                log.append({"step": step, "loss": loss.item(), "seconds": elapsed})
        epoch += 1
    val_loss = validate()
    train_seconds = time.time() - train_started
    print(f"validation: answer-token loss {val_loss:.4f}, perplexity {math.exp(val_loss):.3f}; "
          f"training {train_seconds / 60:.1f} min", flush=True)

    meta = os.path.join(args.out, "meta")
    os.makedirs(meta, exist_ok=True)
    torch.save(model.meta_state_dict(), os.path.join(meta, "consolidated.00.pth"))
    params = {k: SHAPE[k] for k in ("dim", "n_layers", "n_heads", "n_kv_heads", "vocab_size",
                                    "multiple_of", "norm_eps", "rope_theta", "max_seq_len")}
    with open(os.path.join(meta, "params.json"), "w") as f:
        json.dump(params, f, indent=2)
    shutil.copy(os.path.join(args.out, "tokenizer.model"), os.path.join(meta, "tokenizer.model"))
    with open(os.path.join(args.out, "train_log.json"), "w") as f:
        json.dump({"shape": SHAPE, "ffn_width": ffn_width(SHAPE["dim"], SHAPE["multiple_of"]),
                   "parameters": n_params, "steps": args.steps, "batch": args.batch, "seq_len": seq_len,
                   "epochs_started": epoch, "seed": args.seed, "threads": args.threads,
                   "training_tokens": sum(len(e[0]) for e in train_set),
                   "dropout": args.dropout, "user_noise": args.user_noise,
                   "validation_answer_loss": val_loss, "validation_answer_perplexity": math.exp(val_loss),
                   "training_minutes": train_seconds / 60, "total_minutes": (time.time() - started) / 60,
                   "log": log}, f, indent=2)


if __name__ == "__main__":
    main()
