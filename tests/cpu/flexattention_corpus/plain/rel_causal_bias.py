def score_mod(score, b, h, q_idx, kv_idx):
    return (score + float(q_idx - kv_idx)) * 0.5 + (0.0 if q_idx >= kv_idx else -5.0)


def mask_mod(b, h, q_idx, kv_idx):
    return kv_idx <= q_idx
