def mask_mod(b, h, q_idx, kv_idx):
    return (abs(q_idx - kv_idx) < 8 or kv_idx % 16 == 15) and q_idx >= kv_idx
