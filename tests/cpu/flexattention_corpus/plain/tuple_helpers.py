def mask_mod(b, h, q_idx, kv_idx):
    return q_idx // 12 >= kv_idx // 12 and abs(q_idx % 12 - kv_idx % 12) <= 2
