import math


def score_mod(score, b, h, q_idx, kv_idx):
    d = abs(q_idx - kv_idx)
    direction = float(1 if q_idx > kv_idx else (-1 if q_idx < kv_idx else 0))
    decay = torch.floor(torch.sqrt(torch.log(float(d) + 1.0)))
    gate = torch.clamp(torch.log(torch.exp(score) + 1.0), 0.0, 3.0)
    near = float(d < 4) + int(d < 2) + int(h % 2 != 0)
    return torch.tanh(score) * 4.0 - decay + gate * 0.1 + near * direction
