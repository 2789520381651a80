rel_bias: Tensor[float32, 2]
MAX_REL = 31


def score_mod(score, b, h, q_idx, kv_idx):
    distance = (q_idx - kv_idx).abs().clamp(max=MAX_REL)
    return score + rel_bias[h, distance]
