def mask_mod(b, h, q_idx, kv_idx):
    return q_idx < 5 or q_idx >= kv_idx
