def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx

def mask_mod(b, h, q_idx, kv_idx):
    return ~causal(b, h, q_idx) & (q_idx < 3)
