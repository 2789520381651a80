dropped: Tensor[bool, 1]


def score_mod(score, b, h, q_idx, kv_idx):
    return score - 10.0 if dropped[kv_idx] else score
