window: int


def mask_mod(b, h, q_idx, kv_idx):
    d = q_idx - kv_idx
    return d >= 0 and d < (2 * window if q_idx < 32 else window)
