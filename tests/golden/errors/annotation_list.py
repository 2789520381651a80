def mask_mod(b, h, q_idx, kv_idx: list):
    return q_idx >= kv_idx
