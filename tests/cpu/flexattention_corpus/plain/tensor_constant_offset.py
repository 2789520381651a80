def mask_mod(b, h, q_idx, kv_idx):
    return q_idx + 5 >= kv_idx


def score_mod(score, b, h, q_idx, kv_idx):
    return score * 0.5
