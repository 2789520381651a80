import torch


@torch.no_grad()
def bias(q_idx, kv_idx):
    return (q_idx - kv_idx) * 0.05


@torch.compile(mode="max-autotune")
def score_mod(score, b, h, q_idx, kv_idx):
    return score - bias(q_idx, kv_idx).abs()
