def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


mask_mod, causal.__name__ = causal, "causal"
