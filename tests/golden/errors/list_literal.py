def mask_mod(b, h, q_idx, kv_idx):
    sizes = [1, 2, 3]
    return q_idx >= kv_idx
