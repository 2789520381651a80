from torch import Tensor

alibi_slopes: Tensor[float32, 1]


def alibi(score: Tensor, b: Tensor, h: Tensor, q_idx: Tensor, kv_idx: Tensor) -> Tensor:
    return score + alibi_slopes[h] * (kv_idx - q_idx)


score_mod = alibi
