def mask_mod(b, h, q_idx, kv_idx):
    return -3 <= q_idx - kv_idx <= 12
