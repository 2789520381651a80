import torch
from torch import Tensor


def _trig(score, b, h, m, n):
    return torch.sin(torch.cos(score)) + torch.tan(b)


def _trig2(score, b, h, m, n):
    cos_score = torch.cos(score)
    sin_score = torch.sin(score)
    z = cos_score * sin_score + torch.tan(b)
    return z


score_mod = lambda score, b, h, q_idx, kv_idx: _trig(score, b, h, q_idx, kv_idx) + _trig2(score, b, h, q_idx, kv_idx)
