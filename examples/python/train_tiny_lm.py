"""A small causal language model trained with flexjit's attention and with PyTorch FlexAttention,
side by side: 2 layers, d_model 256, 8 heads, T = 1024, packed documents (a document mask) and
ALiBi as score_mod, AdamW, a fixed seed. Prints the loss of both at every step, checks that they
agree within 2%, and reports the median step time of each.

    python3 examples/python/train_tiny_lm.py [--steps 200] [--device cuda] [--compile]

--compile compiles each whole model with torch.compile(fullgraph=True) (FlexAttention's run is
compiled either way: its fused kernels need it). The mods are made in the modules' __init__ and
before the model runs, as torch.compile needs them for flexjit (docs/python.md).

Needs PyTorch and the flexjit package (PYTHONPATH=build/python, or pip install .)."""

import argparse
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.attention.flex_attention import and_masks, create_block_mask
from torch.nn.attention.flex_attention import flex_attention as torch_flex_attention

from flexjit.torch import flex_attention as flexjit_flex_attention

VOCAB, D_MODEL, HEADS, LAYERS, T, BATCH = 512, 256, 8, 2, 1024, 4


def document_ids(batch, length, generator):
    """Packed documents of 64 to 384 tokens, per batch row."""
    rows = []
    for _ in range(batch):
        ids, doc = [], 0
        while len(ids) < length:
            ids += [doc] * int(torch.randint(64, 384, (1,), generator=generator))
            doc += 1
        rows.append(ids[:length])
    return torch.tensor(rows, dtype=torch.int32)


class Attention(nn.Module):
    def __init__(self, attention):
        super().__init__()
        self.qkv = nn.Linear(D_MODEL, 3 * D_MODEL, bias=False)
        self.out = nn.Linear(D_MODEL, D_MODEL, bias=False)
        self.attention = attention
        # Powers of two: exact in any dtype the model is moved to.
        self.register_buffer("slopes", torch.tensor([2.0 ** (-8.0 * (h + 1) / HEADS) for h in range(HEADS)]),
                             persistent=False)

        def alibi(score, b, h, q_idx, kv_idx):
            return score - self.slopes[h] * (q_idx - kv_idx)

        self.alibi = alibi

    def forward(self, x, block_mask):
        B, L, _ = x.shape
        q, k, v = self.qkv(x).view(B, L, 3, HEADS, D_MODEL // HEADS).permute(2, 0, 3, 1, 4)
        y = self.attention(q, k, v, score_mod=self.alibi, block_mask=block_mask)
        return self.out(y.transpose(1, 2).reshape(B, L, D_MODEL))


class Block(nn.Module):
    def __init__(self, attention):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(D_MODEL), nn.LayerNorm(D_MODEL)
        self.attn = Attention(attention)
        self.mlp = nn.Sequential(nn.Linear(D_MODEL, 4 * D_MODEL), nn.GELU(), nn.Linear(4 * D_MODEL, D_MODEL))

    def forward(self, x, block_mask):
        x = x + self.attn(self.norm1(x), block_mask)
        return x + self.mlp(self.norm2(x))


class TinyLM(nn.Module):
    def __init__(self, attention):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, D_MODEL)
        self.blocks = nn.ModuleList(Block(attention) for _ in range(LAYERS))
        self.norm = nn.LayerNorm(D_MODEL)

    def forward(self, tokens, block_mask):
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x, block_mask)
        return self.norm(x) @ self.embed.weight.t()


def train(attention, steps, device, dtype, compile_model):
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(0)
    model = TinyLM(attention).to(device=device, dtype=dtype)
    run = torch.compile(model, fullgraph=True) if compile_model else model
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    docs = document_ids(BATCH, T, generator).to(device)

    def causal(b, h, q_idx, kv_idx):
        return q_idx >= kv_idx

    def same_document(b, h, q_idx, kv_idx):
        return docs[b, q_idx] == docs[b, kv_idx]

    block_mask = create_block_mask(and_masks(causal, same_document), BATCH, None, T, T, device=device)
    losses, times = [], []
    for _ in range(steps):
        tokens = torch.randint(0, VOCAB, (BATCH, T + 1), generator=generator).to(device)
        if device == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        logits = run(tokens[:, :-1], block_mask)
        loss = F.cross_entropy(logits.float().reshape(-1, VOCAB), tokens[:, 1:].reshape(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if device == "cuda":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
        losses.append(loss.item())
    return losses, times


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--compile", action="store_true", help="torch.compile each whole model (fullgraph)")
    args = parser.parse_args()
    dtype = torch.bfloat16 if args.device == "cuda" else torch.float32
    # FlexAttention's fused kernels need torch.compile: its function alone, or within the model.
    flex = torch_flex_attention if args.compile else torch.compile(torch_flex_attention)
    ours, ours_times = train(flexjit_flex_attention, args.steps, args.device, dtype, args.compile)
    theirs, theirs_times = train(flex, args.steps, args.device, dtype, args.compile)
    worst = 0.0
    for step, (a, b) in enumerate(zip(ours, theirs)):
        worst = max(worst, abs(a - b) / abs(b))
        print(f"step {step:4d}  flexjit {a:.4f}  FlexAttention {b:.4f}")
    # The first steps compile; the median is over the rest.
    skip = min(5, args.steps - 1)
    print(f"largest relative loss difference: {worst:.4f} ({'within' if worst <= 0.02 else 'OVER'} 2%)")
    print(f"median step time: flexjit {statistics.median(ours_times[skip:]) * 1e3:.2f} ms, "
          f"FlexAttention {statistics.median(theirs_times[skip:]) * 1e3:.2f} ms")
    raise SystemExit(0 if worst <= 0.02 else 1)


if __name__ == "__main__":
    main()
