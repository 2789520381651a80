def my_decorator(f):
    return f

@my_decorator
def mask_mod(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx
