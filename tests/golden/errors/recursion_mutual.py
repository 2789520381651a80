def even(n):
    return odd(n - 1)

def odd(n):
    return even(n - 1)

def mask_mod(b, h, q_idx, kv_idx):
    return even(q_idx)
