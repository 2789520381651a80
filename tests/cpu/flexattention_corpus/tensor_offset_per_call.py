import torch

# offset = torch.tensor(5, device="cuda") and scale = torch.tensor(0.5, device="cuda"), captured by
# the mods and changed between calls: bound per call, read as numbers.
offset: Tensor[int64, 0]
scale: Tensor[float32, 0]


def mask_mod(b, h, q_idx, kv_idx):
    return q_idx + offset.item() >= kv_idx


def score_mod(score, b, h, q_idx, kv_idx):
    return score * scale + float(offset) * 0.125
