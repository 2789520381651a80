import torch

offset = torch.tensor(5)
scale = torch.tensor(0.5, dtype=torch.float32, device="cuda")


def mask_mod(b, h, q_idx, kv_idx):
    return q_idx + offset.item() >= kv_idx


def score_mod(score, b, h, q_idx, kv_idx):
    return score * scale
