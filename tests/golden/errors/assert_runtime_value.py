def mask_mod(b, h, q_idx, kv_idx):
    assert q_idx >= kv_idx, "causal only"
    return q_idx >= kv_idx
