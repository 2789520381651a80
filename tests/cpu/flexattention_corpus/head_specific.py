import torch


def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def mask_mod(b, h, q_idx, kv_idx):
    # even heads are causal, odd heads see a local band in both directions
    return torch.where(h % 2 == 0, causal(b, h, q_idx, kv_idx), torch.abs(q_idx - kv_idx) <= 8)
