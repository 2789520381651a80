def mask_mod(b, h: FooBar, q_idx, kv_idx):
    return q_idx >= kv_idx
