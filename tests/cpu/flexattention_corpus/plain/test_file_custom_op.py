def score_mod(score, b, h, q_idx, kv_idx):
    return score * 0.5 + (q_idx - kv_idx) * 0.01
