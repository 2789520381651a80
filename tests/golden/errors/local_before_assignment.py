OFFSET = 4

def mask_mod(b, h, q_idx, kv_idx):
    x = OFFSET + q_idx
    OFFSET = 2
    return x >= kv_idx
