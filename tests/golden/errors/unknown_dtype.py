table: Tensor[flaot32, 1]

def score_mod(score, b, h, q_idx, kv_idx):
    return score + table[h]
