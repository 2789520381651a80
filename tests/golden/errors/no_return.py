def mask_mod(b, h, q_idx, kv_idx):
    x = q_idx >= kv_idx
