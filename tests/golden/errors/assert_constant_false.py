WINDOW = 0
assert WINDOW > 0, "the window must be positive"

def mask_mod(b, h, q_idx, kv_idx):
    return q_idx - kv_idx < WINDOW
