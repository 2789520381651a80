def mask_mod(b, h, q_idx, kv_idx):
    return abs(q_idx // 12 - kv_idx // 12) <= 2 and abs(q_idx % 12 - kv_idx % 12) <= 1
