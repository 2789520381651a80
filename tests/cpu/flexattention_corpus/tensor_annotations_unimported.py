def score_mod(score: Tensor, b: Tensor, h: IntTensor, q_idx: Tensor, kv_idx: Tensor) -> Tensor:
    return score + (q_idx - kv_idx) * 0.01


def mask_mod(b: Tensor, h: Tensor, q_idx: LongTensor, kv_idx: BoolTensor) -> BoolTensor:
    return q_idx >= kv_idx
