def mask_mod(b, h, q_idx, kv_idx):
    while q_idx > 0:
        q_idx = q_idx - 1
    return True
