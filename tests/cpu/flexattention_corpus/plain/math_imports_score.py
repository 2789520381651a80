def score_mod(score, b, h, q_idx, kv_idx):
    return score / (math.sqrt(64) / 8.0) - 0.1 * math.floor(math.log(abs(q_idx - kv_idx) + 1))
