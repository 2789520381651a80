import torch

dropped: Tensor[bool, 1]


def score_mod(score, b, h, q_idx, kv_idx):
    return torch.where(~dropped[kv_idx], score, score - 10.0)
