def mask_mod(b, h, q_idx, kv_idx):
    return (q_idx >= kv_idx) & ~(q_idx * 1.5 > 2) & (~(kv_idx * 0.5) > 0)
