rel_bias: Tensor[float32, 2]


def score_mod(score, b, h, q_idx, kv_idx):
    return score + rel_bias[h, min(abs(q_idx - kv_idx), 31)]
