window: int

def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx

def full(b, h, q_idx, kv_idx):
    return True

def pick():
    if window > 0:
        return causal
    return full

mask_mod = pick()
