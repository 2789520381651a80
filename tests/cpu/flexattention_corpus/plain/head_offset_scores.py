head_offset: Tensor[float32, 1]


def score_mod(score, b, h, q_idx, kv_idx):
    return (score * 2.0) * (score * 2.0) * head_offset[h]
