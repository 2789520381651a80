from torch import Tensor

head_offset: Tensor[float32, 1]


def _times_two(score, b, h, m, n):
    """Joint graph needed for correctness"""
    return score * 2


def _squared(score, b, h, m, n):
    return score * score


def _head_offset(score: Tensor, b, h, m, n) -> Tensor:
    return score * head_offset[h]


def score_mod(score, b, h, q_idx, kv_idx):
    s = _times_two(score, b, h, q_idx, kv_idx)
    s = _squared(s, b, h, q_idx, kv_idx)
    return _head_offset(s, b, h, q_idx, kv_idx)
