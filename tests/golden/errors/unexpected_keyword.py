def window(q, k, size=128):
    return q - k < size

def mask_mod(b, h, q_idx, kv_idx):
    return window(q_idx, kv_idx, width=64)
