head_bias: Tensor[float32, 2]
doc_of: Tensor[int64, 2]


def score_mod(score, b, h, q_idx, kv_idx):
    return score + head_bias[h, kv_idx]


def mask_mod(b, h, q_idx, kv_idx):
    return doc_of[b, q_idx] == doc_of[b, kv_idx]
