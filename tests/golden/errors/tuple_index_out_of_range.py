def split(i):
    return i // 8, i % 8

def mask_mod(b, h, q_idx, kv_idx):
    return split(q_idx)[2] >= kv_idx
