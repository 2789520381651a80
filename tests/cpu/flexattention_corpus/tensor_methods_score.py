import torch


def score_mod(score, b, h, q_idx, kv_idx):
    d = (q_idx - kv_idx).abs()
    direction = (q_idx - kv_idx).sign().float()
    decay = (d.float() + 1.0).log().sqrt().floor()
    gate = (score.exp() + 1.0).log().clamp(min=0.0, max=3.0)
    near = (d < 4).to(torch.float32) + (d < 2).int() + (h % 2).bool().long()
    return score.tanh() * 4.0 - decay + gate * 0.1 + near * direction
