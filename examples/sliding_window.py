# Causal sliding window (Mistral / Gemma local layers): the last `window` keys, itself included.
window: int

def mask_mod(b, h, q_idx, kv_idx):
    return (q_idx >= kv_idx) & (q_idx - kv_idx < window)
