import torch

window: int


def mask_mod(b, h, q_idx, kv_idx):
    m = torch.abs(q_idx - kv_idx)
    # the distance is used twice, and compared with a float bound
    return (m <= window * 1.0) & (m >= 0)
