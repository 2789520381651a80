import math

import torch
import torch.nn.functional as F


def score_mod(score, b, h, q_idx, kv_idx):
    exact = F.gelu(score)
    approx = F.gelu(score, approximate="tanh")
    angle = torch.tan((q_idx - kv_idx) * 0.01)
    return exact * 0.5 + approx * 0.5 + angle + math.erf(score * 0.1)
