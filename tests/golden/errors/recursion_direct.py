def f(x):
    return f(x - 1)

def mask_mod(b, h, q_idx, kv_idx):
    return f(q_idx) > 0
