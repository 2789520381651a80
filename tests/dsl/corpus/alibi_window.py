window: int                        # runtime scalar
alibi_slopes: Tensor[float32, 1]   # captured tensor (dtype, rank)
CAP = 50.0                         # compile-time constant

def score_mod(score, b, h, q_idx, kv_idx):
    s = score + alibi_slopes[h] * (kv_idx - q_idx)
    return CAP * torch.tanh(s / CAP)

def mask_mod(b: int, h: int, q_idx: int, kv_idx: int) -> bool:
    """causal sliding window"""
    return 0 <= q_idx - kv_idx < window
