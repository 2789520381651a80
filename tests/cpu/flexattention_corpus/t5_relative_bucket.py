import math

import torch

NUM_BUCKETS = 16
MAX_DISTANCE = 64
bucket_bias: Tensor[float32, 2]


def relative_position_bucket(relative_position, num_buckets=NUM_BUCKETS, max_distance=MAX_DISTANCE):
    """T5's bidirectional buckets: exact for small distances, logarithmic beyond."""
    num_buckets //= 2
    ret = (relative_position > 0).long() * num_buckets
    n = relative_position.abs()
    max_exact = num_buckets // 2
    is_small = n < max_exact
    val_if_large = max_exact + (
        (n.float() / max_exact).log() / math.log(max_distance / max_exact) * (num_buckets - max_exact)
    ).long()
    val_if_large = val_if_large.clamp(max=num_buckets - 1)
    return ret + torch.where(is_small, n, val_if_large)


def score_mod(score, b, h, q_idx, kv_idx):
    bucket = relative_position_bucket(kv_idx - q_idx)
    return score + bucket_bias[h, bucket]
