window: int

def mask_mod(b, h, q_idx, kv_idx):
    return 0 <= q_idx - kv_idx < windw
