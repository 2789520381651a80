def mask_mod(b, h, q_idx, kv_idx):
    return kv_idx < len(q_idx)
