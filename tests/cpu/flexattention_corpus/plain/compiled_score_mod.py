def score_mod(score, b, h, q_idx, kv_idx):
    return score - abs((q_idx - kv_idx) * 0.05)
