from typing import Tuple

from torch import Tensor

WIDTH = 12


def to_2d(idx: Tensor) -> Tuple[Tensor, Tensor]:
    return idx // WIDTH, idx % WIDTH


def mask_mod(b, h, q_idx, kv_idx):
    q_row, q_col = to_2d(q_idx)
    kv_row, kv_col = to_2d(kv_idx)
    return (q_row >= kv_row) & ((q_col - kv_col).abs() <= 2)
