def _rel_bias(score, b, h, m, n):
    return score + (m - n)


def _rel_causal(score, b, h, m, n):
    return torch.where(m <= n, score + (m - n), float("-inf"))


def score_mod(score, b, h, q_idx, kv_idx):
    return _rel_bias(score, b, h, q_idx, kv_idx) * 0.5 + torch.where(q_idx >= kv_idx, 0.0, -5.0)


def mask_mod(b, h, q_idx, kv_idx):
    s = _rel_causal(0.0, b, h, kv_idx, q_idx)
    return s > float("-inf")
