from __future__ import annotations

from typing import Optional

import torch

Tensor = torch.Tensor


def mask_mod(b: Tensor, h: Tensor, q_idx: torch.IntTensor, kv_idx: Optional[Tensor]) -> torch.BoolTensor:
    return q_idx >= kv_idx


def score_mod(score: Tensor, b: int, h: int, q_idx: Tensor, kv_idx: "Tensor") -> Tensor:
    return score * 0.5
