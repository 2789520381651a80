"""FP8 E4M3 inputs from numpy: flexjit.to_e4m3 / from_e4m3 codes, flexjit.e4m3 arrays through
flexjit.attention and Kernel.forward on cpu kernels (per-tensor and per-[B, Hkv] descale factors)
against the float64 oracle run on the decoded values times their factors, and the errors."""

import os

import numpy as np
import pytest

import flexjit
from flexjit import _arrays
from conftest import EXAMPLES, oracle_forward, relative_l2

B, HQ, HKV, T, D = 2, 4, 2, 45, 16
CAUSAL = "def mask_mod(b, h, q_idx, kv_idx):\n    return q_idx >= kv_idx\n"
# A score_mod far from linear at these scores: it sees the descaled score, or the results differ.
SOFTCAP = "def score_mod(score, b, h, q_idx, kv_idx):\n    return 2.0 * torch.tanh(score / 2.0)\n"


def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def fp8_inputs(rng, stored_scale=4.0):
    """(e4m3 q, k, v, their decoded float64 values): values spread over the format's range, as
    stored values of scaled tensors are."""
    shapes = ((B, HQ, T, D), (B, HKV, T, D), (B, HKV, T, D))
    codes = [flexjit.to_e4m3(stored_scale * rng.standard_normal(s)) for s in shapes]
    return [flexjit.e4m3(c) for c in codes], [flexjit.from_e4m3(c).astype(np.float64) for c in codes]


def per_kv_head(factors, heads):
    """[B, Hkv] factors broadcast over the heads of a [B, heads, T, D] tensor (query head h uses kv
    head h / (heads / Hkv))."""
    return np.repeat(factors, heads // factors.shape[1], axis=1)[:, :, None, None]


def test_known_codes():
    values = np.array([448.0, 1.0, 2.0**-9, -0.0, 0.0, np.nan, -np.nan, -448.0, 2.0**-6, 1.125])
    assert flexjit.to_e4m3(values).tolist() == [0x7E, 0x38, 0x01, 0x80, 0x00, 0x7F, 0xFF, 0xFE, 0x08, 0x39]
    decoded = flexjit.from_e4m3(np.array([0x7E, 0x38, 0x01, 0x80, 0xFE, 0x08, 0x39], dtype=np.uint8))
    assert decoded.dtype == np.float32
    assert decoded.tolist() == [448.0, 1.0, 2.0**-9, -0.0, -448.0, 2.0**-6, 1.125]
    assert np.signbit(decoded[3])
    assert np.isnan(flexjit.from_e4m3(np.array([0x7F, 0xFF], dtype=np.uint8))).all()


def test_rounding_and_saturation():
    # Ties go to the even code; values past 448 and infinities saturate.
    values = [1.0625, 1.1875, 0.5 * 2.0**-9, 1.5 * 2.0**-9, 464.0, 1e6, np.inf, -np.inf, 1.07]
    assert flexjit.to_e4m3(values).tolist() == [0x38, 0x3A, 0x00, 0x02, 0x7E, 0x7E, 0x7E, 0xFE, 0x39]


def test_every_code_round_trips():
    codes = np.arange(256, dtype=np.uint8).reshape(16, 16)
    values = flexjit.from_e4m3(codes)
    assert values.shape == (16, 16)
    back = flexjit.to_e4m3(values)
    assert back.dtype == np.uint8 and back.shape == (16, 16)
    # NaN too: 0x7f and 0xff decode to NaNs of their sign, which encode back to them.
    assert sorted(codes[np.isnan(values)].tolist()) == [0x7F, 0xFF]
    assert np.array_equal(back, codes)
    assert np.array_equal(flexjit.from_e4m3(flexjit.e4m3(codes)), values, equal_nan=True)


def test_conversion_errors():
    with pytest.raises(flexjit.ArgumentError, match="uint8"):
        flexjit.e4m3(np.zeros(4, dtype=np.float32))
    with pytest.raises(flexjit.ArgumentError, match="uint8"):
        flexjit.from_e4m3(np.zeros(4, dtype=np.int32))


def test_attention_with_per_tensor_descales(rng):
    (q, k, v), (qf, kf, vf) = fp8_inputs(rng)
    q_descale, k_descale, v_descale = 0.25, np.array([0.5], dtype=np.float32), np.array([1.5], dtype=np.float32)
    out, lse = flexjit.attention(q, k, v, mask_mod=causal, enable_gqa=True, return_lse=True, q_descale=q_descale,
                                 k_descale=k_descale, v_descale=v_descale)
    # numpy has no bf16: the kernel's bf16 out comes back as float32 holding those values.
    assert out.dtype == np.float32 and out.shape == (B, HQ, T, D)
    assert not (out.view(np.uint32) & 0xFFFF).any()
    ref_out, ref_lse = oracle_forward(CAUSAL, qf * 0.25, kf * 0.5, vf)
    assert relative_l2(out, 1.5 * ref_out) < 4e-3  # bf16 rounding of out
    assert relative_l2(lse, ref_lse) < 1e-5


def test_kernel_forward_with_per_kv_head_descales(rng):
    kernel = flexjit.compile(SOFTCAP, head_dim=D, dtype="fp8_e4m3", device="cpu")
    assert kernel.dtype == "fp8_e4m3"
    (q, k, v), (qf, kf, vf) = fp8_inputs(rng)
    q_descale, k_descale, v_descale = (rng.uniform(0.1, 2.0, (B, HKV)).astype(np.float32) for _ in range(3))
    out, lse = kernel.forward(q, k, v, scale=0.3, return_lse=True, q_descale=q_descale, k_descale=k_descale,
                              v_descale=v_descale)
    ref_out, ref_lse = oracle_forward(SOFTCAP, qf * per_kv_head(q_descale, HQ), kf * per_kv_head(k_descale, HKV),
                                      vf * per_kv_head(v_descale, HKV), scale=0.3)
    assert relative_l2(out, ref_out) < 4e-3
    assert relative_l2(lse, ref_lse) < 1e-5
    # Without factors the stored values are the values.
    plain = kernel.forward(q, k, v, scale=0.3)
    assert relative_l2(plain, oracle_forward(SOFTCAP, qf, kf, vf, scale=0.3)[0]) < 4e-3


def test_fp8_dtype_names():
    path = os.path.join(EXAMPLES, "causal.py")
    for name in ("fp8_e4m3", "fp8", "float8_e4m3fn"):
        assert flexjit.compile(path, head_dim=D, dtype=name, device="cpu").dtype == "fp8_e4m3"


def test_descale_on_another_kernel_is_named(rng):
    kernel = flexjit.compile(os.path.join(EXAMPLES, "causal.py"), head_dim=D, dtype="float32", device="cpu")
    q = rng.standard_normal((B, HQ, T, D)).astype(np.float32)
    k, v = (rng.standard_normal((B, HQ, T, D)).astype(np.float32) for _ in range(2))
    with pytest.raises(flexjit.ArgumentError, match="q_descale: only an fp8_e4m3 kernel takes descale factors"):
        kernel.forward(q, k, v, q_descale=np.ones(1, dtype=np.float32))
    with pytest.raises(flexjit.ArgumentError, match="q_descale"):
        flexjit.attention(q, k, v, mask_mod=causal, q_descale=2.0)


def test_fp8_argument_errors(rng):
    kernel = flexjit.compile(os.path.join(EXAMPLES, "causal.py"), head_dim=D, dtype="fp8_e4m3", device="cpu")
    (q, k, v), _ = fp8_inputs(rng)
    with pytest.raises(flexjit.ArgumentError, match="k_descale"):
        kernel.forward(q, k, v, k_descale=np.ones((B, HKV + 1), dtype=np.float32))
    with pytest.raises(flexjit.ArgumentError, match="v_descale: expected a float32 array"):
        kernel.forward(q, k, v, v_descale=[1.0])
    with pytest.raises(flexjit.ArgumentError, match="bf16"):
        kernel.forward(q, k, v, out=np.empty((B, HQ, T, D), dtype=np.float32))
    # Integers of another width than the type named are refused by the C++ side.
    wrong = _arrays.Reinterpreted(np.zeros((B, HQ, T, D), dtype=np.int16), "fp8_e4m3")
    with pytest.raises(flexjit.ArgumentError, match="q: fp8_e4m3 elements come as 1-byte integers, got i16"):
        kernel.forward(wrong, k, v)


def test_fp8_kernels_have_no_backward_or_kv_cache(rng):
    (q, k, v), _ = fp8_inputs(rng)
    out, lse = flexjit.attention(q, k, v, mask_mod=causal, enable_gqa=True, return_lse=True)
    with pytest.raises(flexjit.UnsupportedError, match="fp8_e4m3 kernels run the forward"):
        flexjit.attention_backward(q, k, v, out, lse, np.ones_like(out), mask_mod=causal, enable_gqa=True)
    kernel = flexjit.compile(os.path.join(EXAMPLES, "causal.py"), head_dim=D, dtype="fp8_e4m3", device="cpu")
    with pytest.raises(flexjit.UnsupportedError, match="no backward"):
        kernel.backward(q, k, v, out, lse, np.ones_like(out))
    with pytest.raises(flexjit.UnsupportedError, match="KV cache"):
        kernel.forward(q, k, v, kv_lens=np.full(B, T, dtype=np.int32))
