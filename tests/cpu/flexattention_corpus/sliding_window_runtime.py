window: int


def mask_mod(b, h, q_idx, kv_idx):
    causal = q_idx >= kv_idx
    windowed = q_idx - kv_idx < window
    return causal & windowed
