#!/usr/bin/env python3
"""Cross-checks LlamaDesk's Meta and Hugging Face readers against the real writers.

Not part of CI (it needs PyPI's torch, transformers and sentencepiece). For each real llama2.c
model in ../shared it builds the weights as a transformers LlamaForCausalLM and writes them with
  - transformers' save_pretrained: safetensors, single file and sharded, f32 and bf16;
  - torch.save in Meta's layout (consolidated.NN.pth + params.json): one shard whose q/k/v are
    views of one storage, as Meta's files are, and two model-parallel shards; f32 and bf16.
Then it runs llamadesk-cli on every folder and checks that the greedy text equals PyTorch's own
greedy generation from the same weights (bf16 weights are widened to f32 in PyTorch, which is the
arithmetic LlamaDesk does with bf16 weights).

  python3 engine/tools/formats/crosscheck_pytorch.py --cli build/engine/tools/cli/llamadesk-cli
"""
import argparse
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import numpy as np
import sentencepiece
import torch
from transformers import LlamaConfig, LlamaForCausalLM
from transformers.utils import logging as transformers_logging


def read_llama2c(path):
    """A llama2.c checkpoint as a Meta-layout state dict of float32 tensors plus its shape."""
    with open(path, "rb") as f:
        dim, hidden, n_layers, n_heads, n_kv_heads, vocab, seq_len = struct.unpack("7i", f.read(28))
        data = np.frombuffer(f.read(), dtype=np.float32)
    shared = vocab > 0
    vocab = abs(vocab)
    head = dim // n_heads
    kv_dim = n_kv_heads * head
    at = 0

    def take(*shape):
        nonlocal at
        n = int(np.prod(shape))
        t = torch.from_numpy(data[at:at + n].copy()).reshape(shape)
        at += n
        return t

    emb = take(vocab, dim)
    rms_att = take(n_layers, dim)
    wq, wk, wv = take(n_layers, dim, dim), take(n_layers, kv_dim, dim), take(n_layers, kv_dim, dim)
    wo = take(n_layers, dim, dim)
    rms_ffn = take(n_layers, dim)
    w1, w2, w3 = take(n_layers, hidden, dim), take(n_layers, dim, hidden), take(n_layers, hidden, dim)
    norm = take(dim)
    take(seq_len, head // 2)
    take(seq_len, head // 2)  # llama2.c's rotary tables, recomputed by every reader
    out = emb.clone() if shared else take(vocab, dim)
    sd = {"tok_embeddings.weight": emb, "norm.weight": norm, "output.weight": out}
    for i in range(n_layers):
        p = f"layers.{i}."
        sd[p + "attention.wq.weight"] = wq[i]
        sd[p + "attention.wk.weight"] = wk[i]
        sd[p + "attention.wv.weight"] = wv[i]
        sd[p + "attention.wo.weight"] = wo[i]
        sd[p + "feed_forward.w1.weight"] = w1[i]
        sd[p + "feed_forward.w2.weight"] = w2[i]
        sd[p + "feed_forward.w3.weight"] = w3[i]
        sd[p + "attention_norm.weight"] = rms_att[i]
        sd[p + "ffn_norm.weight"] = rms_ffn[i]
    shape = dict(dim=dim, hidden=hidden, n_layers=n_layers, n_heads=n_heads,
                 n_kv_heads=n_kv_heads, vocab=vocab, seq_len=seq_len)
    return sd, shape


def hf_rows(w, n_heads):
    """Meta's interleaved rotary rows in Hugging Face's order (the two halves of each head apart)."""
    rows, cols = w.shape
    return w.reshape(n_heads, rows // n_heads // 2, 2, cols).transpose(1, 2).reshape(rows, cols)


def hf_model(sd, shape):
    config = LlamaConfig(
        hidden_size=shape["dim"], intermediate_size=shape["hidden"],
        num_hidden_layers=shape["n_layers"], num_attention_heads=shape["n_heads"],
        num_key_value_heads=shape["n_kv_heads"], vocab_size=shape["vocab"],
        max_position_embeddings=shape["seq_len"], rms_norm_eps=1e-5, rope_theta=10000.0,
        tie_word_embeddings=False, bos_token_id=1, eos_token_id=2)
    hf = {"model.embed_tokens.weight": sd["tok_embeddings.weight"],
          "model.norm.weight": sd["norm.weight"], "lm_head.weight": sd["output.weight"]}
    for i in range(shape["n_layers"]):
        m, h = f"layers.{i}.", f"model.layers.{i}."
        hf[h + "self_attn.q_proj.weight"] = hf_rows(sd[m + "attention.wq.weight"], shape["n_heads"])
        hf[h + "self_attn.k_proj.weight"] = hf_rows(sd[m + "attention.wk.weight"], shape["n_kv_heads"])
        hf[h + "self_attn.v_proj.weight"] = sd[m + "attention.wv.weight"]
        hf[h + "self_attn.o_proj.weight"] = sd[m + "attention.wo.weight"]
        hf[h + "mlp.gate_proj.weight"] = sd[m + "feed_forward.w1.weight"]
        hf[h + "mlp.down_proj.weight"] = sd[m + "feed_forward.w2.weight"]
        hf[h + "mlp.up_proj.weight"] = sd[m + "feed_forward.w3.weight"]
        hf[h + "input_layernorm.weight"] = sd[m + "attention_norm.weight"]
        hf[h + "post_attention_layernorm.weight"] = sd[m + "ffn_norm.weight"]
    model = LlamaForCausalLM(config)
    missing, unexpected = model.load_state_dict(hf, strict=False)
    missing = [k for k in missing if "rotary" not in k]
    assert not missing and not unexpected, (missing, unexpected)
    return model.eval()


def meta_params(shape):
    # multiple_of chosen so Meta's formula (2/3 of 4*dim, rounded up) gives the model's width
    for multiple_of in (256, 128, 64, 32, 16, 8, 4, 2, 1):
        width = int(2 * 4 * shape["dim"] / 3)
        if multiple_of * ((width + multiple_of - 1) // multiple_of) == shape["hidden"]:
            break
    else:
        raise SystemExit(f"no multiple_of gives FFN width {shape['hidden']}")
    return dict(dim=shape["dim"], n_layers=shape["n_layers"], n_heads=shape["n_heads"],
                n_kv_heads=shape["n_kv_heads"], vocab_size=-1, multiple_of=multiple_of,
                norm_eps=1e-5)


# Meta's model-parallel split: dim 0 for these, dim 1 for wo, w2 and the embedding, norms copied.
ROWS = ("wq", "wk", "wv", "w1", "w3", "output")
COLUMNS = ("wo", "w2", "tok_embeddings")


def meta_shards(sd, n):
    shards = [{} for _ in range(n)]
    for name, t in sd.items():
        leaf = name.split(".")[-2]
        dim = 0 if leaf in ROWS else 1 if leaf in COLUMNS else None
        parts = [t] * n if dim is None else torch.chunk(t, n, dim=dim)
        for s, p in zip(shards, parts):
            s[name] = p.clone()
    return shards


def with_shared_qkv_storage(sd, n_layers):
    """q, k and v of each layer as views of one storage at different offsets."""
    out = dict(sd)
    for i in range(n_layers):
        names = [f"layers.{i}.attention.w{x}.weight" for x in "qkv"]
        fused = torch.cat([sd[k] for k in names], dim=0)
        at = 0
        for k in names:
            rows = sd[k].shape[0]
            out[k] = fused[at:at + rows]
            at += rows
    return out


def write_meta(folder, sd, shape, dtype, n_shards, tokenizer):
    os.makedirs(folder)
    sd = {k: v.to(dtype) for k, v in sd.items()}
    if n_shards == 1:
        torch.save(with_shared_qkv_storage(sd, shape["n_layers"]),
                   os.path.join(folder, "consolidated.00.pth"))
    else:
        for i, s in enumerate(meta_shards(sd, n_shards)):
            torch.save(s, os.path.join(folder, f"consolidated.{i:02d}.pth"))
    with open(os.path.join(folder, "params.json"), "w") as f:
        json.dump(meta_params(shape), f)
    shutil.copy(tokenizer, os.path.join(folder, "tokenizer.model"))


def write_hf(folder, model, dtype, shard_size, tokenizer):
    copy = LlamaForCausalLM(model.config).eval()
    copy.load_state_dict(model.state_dict())
    copy.to(dtype).save_pretrained(folder, safe_serialization=True, max_shard_size=shard_size)
    shutil.copy(tokenizer, os.path.join(folder, "tokenizer.model"))


def pytorch_greedy(model, dtype, ids, n):
    m = LlamaForCausalLM(model.config).eval()
    m.load_state_dict(model.state_dict())
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(p.to(dtype).to(torch.float32))
        out = m.generate(torch.tensor([ids]), max_new_tokens=n, do_sample=False,
                         min_new_tokens=n, eos_token_id=None, pad_token_id=0)
    return out[0].tolist()


def llamadesk_text(cli, folder, prompt, n):
    run = subprocess.run([cli, "--model", folder, "--prompt", prompt, "-n", str(n),
                          "--temperature", "0", "--backend", "cpu", "--threads", "1"],
                         capture_output=True, text=True)
    if run.returncode != 0:
        return None, run.stderr.strip()
    return run.stdout, None


reference = None


def main():
    global reference
    root = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--cli", default=os.path.join(root, "../../../build/engine/tools/cli/llamadesk-cli"))
    ap.add_argument("--shared", default=os.environ.get("LLAMADESK_SHARED_DIR",
                                                       os.path.join(root, "../../../../shared")))
    ap.add_argument("-n", type=int, default=48, help="new tokens per check")
    args = ap.parse_args()
    torch.manual_seed(0)
    transformers_logging.disable_progress_bar()

    models = [("stories260K", "stories260K/stories260K.bin", "stories260K/tok512.model"),
              ("babyllama", "babyllama/model5000.bin", "babyllama/tok105.model")]
    prompt = "Once upon a time"
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, weights, tok_path in models:
            weights = os.path.join(args.shared, "models", weights)
            tok_path = os.path.join(args.shared, "models", tok_path)
            if not os.path.exists(weights):
                print(f"skip {name}: {weights} not found")
                continue
            sd, shape = read_llama2c(weights)
            reference = hf_model(sd, shape)
            sp = sentencepiece.SentencePieceProcessor(model_file=tok_path)
            prompt_ids = [sp.bos_id()] + sp.encode(prompt)
            n = min(args.n, shape["seq_len"] - len(prompt_ids))
            for dtype_name, dtype in (("f32", torch.float32), ("bf16", torch.bfloat16)):
                ids = pytorch_greedy(reference, dtype, prompt_ids, n)
                expected = sp.decode(ids[1:])
                cases = {
                    "HF save_pretrained, 1 file": lambda d: write_hf(d, reference, dtype, "10GB", tok_path),
                    "HF save_pretrained, sharded": lambda d: write_hf(d, reference, dtype, "200KB", tok_path),
                    "Meta torch.save, 1 shard (q/k/v one storage)":
                        lambda d: write_meta(d, sd, shape, dtype, 1, tok_path),
                }
                # Meta's shards are equal slices; a vocabulary of odd size has none
                if shape["vocab"] % 2 == 0:
                    cases["Meta torch.save, 2 shards"] = lambda d: write_meta(d, sd, shape, dtype, 2, tok_path)
                for case, write in cases.items():
                    folder = os.path.join(tmp, f"{name}-{dtype_name}-{len(os.listdir(tmp))}")
                    write(folder)
                    files = sorted(f for f in os.listdir(folder) if not f.endswith(".model"))
                    text, error = llamadesk_text(args.cli, folder, prompt, n)
                    ok = text == expected
                    failures += not ok
                    print(f"{'ok  ' if ok else 'FAIL'} {name} {dtype_name} {case}: {', '.join(files)}")
                    if not ok:
                        print(f"     PyTorch:   {expected!r}\n     LlamaDesk: {error or text!r}")
            print(f"     {name} greedy ({n} tokens): {sp.decode(pytorch_greedy(reference, torch.float32, prompt_ids, n)[1:])!r}")
    print("all equal" if failures == 0 else f"{failures} case(s) differ")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
