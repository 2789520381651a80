# The shape of a file from PyTorch's FlexAttention tests: imports no mod uses (inductor internals,
# collections.abc), a custom op with its fake on a helper, a test class, loops over configs. The
# score mod reaches only its own helper and a constant.
import collections.abc
import functools
from collections import namedtuple

import torch
from torch._inductor.lowering import make_pointwise, register_lowering
from torch.nn.attention.flex_attention import _score_mod_signature, and_masks

Tolerances = namedtuple("Tolerances", ["atol", "rtol"])
TEST_DTYPES = [torch.float16, torch.bfloat16]


@torch.library.custom_op("mylib::scale_op", mutates_args=())
def scale_op(x: torch.Tensor) -> torch.Tensor:
    return x * 2


@scale_op.register_fake
def _(x):
    return torch.empty_like(x)


SCALE = 0.5


def _half(x):
    return x * SCALE


def _times_two_plus_position(score, b, h, q_idx, kv_idx):
    return _half(score) + (q_idx - kv_idx) * 0.01


class TestFlexAttention:
    def test_score_mod(self):
        for dtype in TEST_DTYPES:
            pass


score_mod: _score_mod_signature = _times_two_plus_position
shapes = [(B, H) for B in (1, 2) for H in (4, 8)]
for B, H in shapes:
    q = torch.rand(B, H, 128, 64)
while False:
    pass
