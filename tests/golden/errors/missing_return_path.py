def mask_mod(b, h, q_idx, kv_idx):
    if q_idx >= kv_idx:
        return True
