def mask_mod(b, h, q_idx, kv_idx):
    return q_idx // 16 == kv_idx // 16 and q_idx >= kv_idx
