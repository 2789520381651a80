slopes: Tensor[float32, 1]

def score_mod(score, b, h, q_idx, kv_idx):
    return score * slopes
