def mask_mod(b, h, q_idx, kv_idx):
    return kv_idx < 10 or q_idx >= kv_idx
