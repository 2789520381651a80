table: Tensor[float32, 2]

def score_mod(score, b, h, q_idx, kv_idx):
    return score + table.size(h)
