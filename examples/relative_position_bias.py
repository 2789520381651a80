# T5 / Swin-style learned relative position bias: a per-head table indexed by the clipped
# distance, added to the scores, on a causal mask.
MAX_DISTANCE = 128
rel_bias: Tensor[float32, 2]     # [heads, 2 * MAX_DISTANCE + 1]

def score_mod(score, b, h, q_idx, kv_idx):
    d = clamp(kv_idx - q_idx, -MAX_DISTANCE, MAX_DISTANCE)
    return score + rel_bias[h, d + MAX_DISTANCE]

def mask_mod(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx
