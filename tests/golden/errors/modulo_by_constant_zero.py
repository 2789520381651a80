N = 4

def mask_mod(b, h, q_idx, kv_idx):
    return q_idx % (N - 4) < 0
