from typing import Callable, Optional

from torch import Tensor


def generate_strided_mask(stride: int, offset: Optional[int] = None) -> Callable:
    assert stride > 0, "stride must be positive"
    assert offset is None or 0 <= offset < stride, f"offset must lie in [0, {stride})"
    start = 0 if offset is None else offset

    def strided(b: Tensor, h: Tensor, q_idx: Tensor, kv_idx: Tensor) -> Tensor:
        return ((kv_idx % stride) == start) | (q_idx == kv_idx)

    strided.__name__ = f"strided_{stride}_{start}"
    strided.__doc__ = "keys on a stride, and the diagonal"
    return strided


mask_mod = generate_strided_mask(5, offset=2)
