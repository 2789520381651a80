def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx

mask_mod = and_masks(causal, 3)
