table: Tensor[float32, 3]

def score_mod(score, b, h, q_idx, kv_idx):
    return score + table[h][q_idx]
