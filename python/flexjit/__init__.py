"""flexjit: custom attention kernels from FlexAttention-style Python mods, generated as CUDA,
compiled at run time with NVRTC and cached (docs/python.md).

    kernel = flexjit.compile("examples/causal.py", head_dim=64, dtype="float32", device="cpu")
    out, lse = kernel.forward(q, k, v, return_lse=True)

    out = flexjit.attention(q, k, v, mask_mod=lambda b, h, q_idx, kv_idx: q_idx >= kv_idx)
"""

from . import cache
from ._attention import attention, attention_backward
from ._fp8 import e4m3, from_e4m3, to_e4m3
from ._kernel import Kernel, compile
from ._merge import merge_attention
from .errors import (ArgumentError, CompileError, CudaError, Diagnostic, Error, InternalError, NvrtcError,
                     UnsupportedError)

__all__ = [
    "attention", "attention_backward", "cache", "compile", "Kernel", "merge_attention", "e4m3", "to_e4m3", "from_e4m3",
    "ArgumentError", "CompileError", "CudaError", "Diagnostic", "Error", "InternalError", "NvrtcError",
    "UnsupportedError",
]
