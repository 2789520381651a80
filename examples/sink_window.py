# StreamingLLM: a causal sliding window plus a few always-visible sink tokens at the start.
window: int
SINKS = 4

def mask_mod(b, h, q_idx, kv_idx):
    causal = q_idx >= kv_idx
    in_window = q_idx - kv_idx < window
    is_sink = kv_idx < SINKS
    return causal & (in_window | is_sink)
