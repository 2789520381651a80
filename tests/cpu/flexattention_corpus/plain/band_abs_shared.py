window: int


def mask_mod(b, h, q_idx, kv_idx):
    return q_idx - kv_idx <= window and kv_idx - q_idx <= window
