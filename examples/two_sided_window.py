# Two-sided (non-causal) local attention: each token sees `window` tokens on either side,
# as in encoder models such as Longformer's local attention.
window: int

def mask_mod(b, h, q_idx, kv_idx):
    return abs(q_idx - kv_idx) <= window
