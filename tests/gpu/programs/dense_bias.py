# Test program: no mask; a float and a bool runtime scalar and a bf16 rank-2 capture, so every
# kind of Params field is packed and read.
temperature: float
use_bias: bool
bias: Tensor[bfloat16, 2]   # [Hq, Tkv]

def score_mod(score, b, h, q_idx, kv_idx):
    return score * temperature + (bias[h, kv_idx] if use_bias else 0.0)
