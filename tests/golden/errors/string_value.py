def mask_mod(b, h, q_idx, kv_idx):
    name = "causal"
    return q_idx >= kv_idx + name
