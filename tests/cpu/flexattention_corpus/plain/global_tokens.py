def mask_mod(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx or kv_idx < 6 or q_idx < 6
