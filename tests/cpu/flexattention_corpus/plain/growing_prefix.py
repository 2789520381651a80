def mask_mod(b, h, q_idx, kv_idx):
    return (kv_idx < (q_idx + 1) // 2 + 3) | (kv_idx == q_idx)
