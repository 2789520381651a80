def mask_mod(b, h, q_idx, kv_idx):
    return (q_idx << 64) >= kv_idx
