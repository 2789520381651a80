import torch

rel_bias: torch.Tensor[float32, 2]
window: int

assert window > 0, "window must be positive"
assert rel_bias.ndim == 2


def score_mod(score, b, h, q_idx, kv_idx):
    num_heads, num_buckets = rel_bias.shape
    bucket = torch.clamp(q_idx - kv_idx, 0, num_buckets - 1)
    return score + rel_bias[h % num_heads, bucket]


def mask_mod(b, h, q_idx, kv_idx):
    return (q_idx >= kv_idx) & (q_idx - kv_idx < window * rel_bias.size(-1))
