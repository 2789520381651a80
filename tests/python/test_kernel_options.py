"""FlexAttention's kernel_options: the forward tile fields override the table's tile, the family,
math and arch pass through, and what is Triton's own is ignored. CUDA kernels compile with NVRTC
alone, so this runs without a GPU."""

import os

import numpy as np
import pytest

import flexjit
from flexjit import _attention
from flexjit.errors import ArgumentError, UnsupportedError
from conftest import EXAMPLES

CAUSAL = os.path.join(EXAMPLES, "causal.py")


def test_flexattention_keys_become_compile_options():
    options = _attention._kernel_options({
        "BLOCK_M": 64, "BLOCK_N": 32, "num_warps": 4, "num_stages": 3,  # the forward tile
        "BLOCK_M1": 32, "BLOCK_N2": 64, "PRESCALE_QK": True,  # the backward's and Triton's: ignored
        "family": "sm80_fwd", "math": "exact"})
    assert options == (("family", "sm80_fwd"), ("math", "exact"),
                       ("tile", (("block_m", 64), ("block_n", 32), ("stages", 3), ("warps", 4))))
    assert _attention._kernel_options(None) == ()
    assert _attention._kernel_options({"BACKWARD_FAMILY": "sm90_bwd"}) == (("backward_family", "sm90_bwd"),)


def test_the_backward_at_head_dim_256_is_hoppers_wide_form():
    """At head dim 256 the backward is the Hopper family's wide form (64 keys a CTA), chosen
    unnamed on sm_90a (NVRTC, no GPU); on sm_80 no family serves it, and the error says why."""
    kernel = flexjit.compile(CAUSAL, 256, "bf16", "cuda", arch="sm_90a")
    report = kernel.compile_report("backward")
    assert (report["family"], report["entry"]) == ("sm90_bwd", "flexjit_bwd_causal_d256_bf16")
    assert report["tile"]["block_n"] == 64 and report["spill_bytes"] == 0
    assert kernel.family == "sm90_fwd"
    ampere = flexjit.compile(CAUSAL, 256, "bf16", "cuda", arch="sm_80")
    with pytest.raises(UnsupportedError, match=r"sm80_bwd: head dim 256 is above 128"):
        ampere.compile_report("backward")


def test_given_tile_fields_override_the_tables_tile():
    table = flexjit.compile(CAUSAL, 64, "bf16", "cuda", arch="sm_80", family="sm80_fwd").tile
    kernel = flexjit.compile(CAUSAL, 64, "bf16", "cuda", arch="sm_80", family="sm80_fwd", tile={"block_n": 32})
    assert kernel.tile == {**table, "block_n": 32}


def test_a_tile_the_kernels_cannot_run_names_the_constraint():
    with pytest.raises(UnsupportedError, match="block_m"):
        flexjit.compile(CAUSAL, 64, "bf16", "cuda", arch="sm_80", family="sm80_fwd", tile={"block_m": 40})


def test_an_unknown_tile_field_is_named():
    with pytest.raises(ArgumentError, match="tile: unknown field 'BLOCK_M'"):
        flexjit.compile(CAUSAL, 64, "bf16", "cuda", arch="sm_80", tile={"BLOCK_M": 64})


def test_cpu_calls_ignore_the_tile(rng=np.random.default_rng(0)):
    q, k, v = (rng.standard_normal((1, 2, 20, 16)).astype(np.float32) for _ in range(3))
    plain = flexjit.attention(q, k, v, mask_mod=lambda b, h, q_idx, kv_idx: q_idx >= kv_idx)
    tiled = flexjit.attention(q, k, v, mask_mod=lambda b, h, q_idx, kv_idx: q_idx >= kv_idx,
                              kernel_options={"BLOCK_M": 64, "num_warps": 8})
    np.testing.assert_array_equal(plain, tiled)
