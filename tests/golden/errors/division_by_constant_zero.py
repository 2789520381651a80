def mask_mod(b, h, q_idx, kv_idx):
    return (q_idx // 0 == 0) | (q_idx >= kv_idx)
