"""Mistakes reported where the user made them: the Python file's own line and column for mods
given as functions, the program's line for files, every binding problem named."""

import os

import numpy as np
import pytest

import flexjit
from conftest import EXAMPLES, qkv

THIS_FILE = os.path.abspath(__file__)


def line_of(text):
    with open(THIS_FILE) as f:
        for number, line in enumerate(f, 1):
            if text in line and "line_of" not in line:
                return number, line.index(text) + 1
    raise AssertionError(text)


def returns_an_int(b, h, q_idx, kv_idx):
    return q_idx - kv_idx


def reads_an_undefined_name(score, b, h, q_idx, kv_idx):
    return score * scael  # noqa: F821


def test_a_mod_error_points_at_the_python_file(rng):
    q, k, v = qkv(rng, Hkv=4)
    with pytest.raises(flexjit.CompileError) as caught:
        flexjit.attention(q, k, v, mask_mod=returns_an_int)
    line, col = line_of("q_idx - kv_idx\n")
    message = str(caught.value)
    assert message.startswith(f"{THIS_FILE}:{line}:")
    assert "mask_mod must return bool, got int" in message
    (d,) = caught.value.diagnostics
    assert (d.file, d.line, d.severity) == (THIS_FILE, line, "error")
    assert col <= d.col < col + len("q_idx - kv_idx")


def test_an_undefined_name_is_reported_at_its_use(rng):
    q, k, v = qkv(rng, Hkv=4)
    with pytest.raises(flexjit.CompileError) as caught:
        flexjit.attention(q, k, v, score_mod=reads_an_undefined_name)
    line, col = line_of("scael")
    (d,) = caught.value.diagnostics
    assert (d.file, d.line, d.col) == (THIS_FILE, line, col)
    assert "'scael' is not defined" in d.message


class Opaque:
    pass


OPAQUE = Opaque()


def reads_an_object(b, h, q_idx, kv_idx):
    return q_idx >= OPAQUE


def test_an_unreadable_value_is_named(rng):
    q, k, v = qkv(rng, Hkv=4)
    with pytest.raises(flexjit.CompileError) as caught:
        flexjit.attention(q, k, v, mask_mod=reads_an_object)
    line, col = line_of("q_idx >= OPAQUE")
    (d,) = caught.value.diagnostics
    assert (d.file, d.line, d.col) == (THIS_FILE, line, col + len("q_idx >= "))
    assert "'OPAQUE' is an Opaque" in d.message


def test_a_program_file_error_keeps_its_own_line(tmp_path):
    path = tmp_path / "bad.py"
    path.write_text("def mask_mod(b, h, q_idx):\n    return q_idx >= 0\n")
    with pytest.raises(flexjit.CompileError) as caught:
        flexjit.compile(path, head_dim=16, dtype="float32", device="cpu")
    (d,) = caught.value.diagnostics
    assert (d.file, d.line, d.col) == (str(path), 1, 5)
    assert d.message == "mask_mod must take 4 parameters (b, h, q_idx, kv_idx), got 3"
    assert str(caught.value).startswith(f"{path}:1:5: error: mask_mod must take 4 parameters")


def test_binding_problems_are_all_named(rng):
    kernel = flexjit.compile(os.path.join(EXAMPLES, "alibi_softcap_window.py"), head_dim=16, dtype="float32",
                             device="cpu")
    q, k, v = qkv(rng, Hkv=4)
    with pytest.raises(flexjit.ArgumentError) as caught:
        kernel.forward(q, k, v, bind={"window": 1.5, "alibi_slope": np.ones(4, np.float32)})
    message = str(caught.value)
    assert "'alibi_slope' is not declared by the program" in message
    assert "alibi_slopes" in message and "window" in message


def test_wrong_shapes_and_dtypes_are_argument_errors(rng):
    kernel = flexjit.compile(os.path.join(EXAMPLES, "causal.py"), head_dim=16, dtype="float32", device="cpu")
    q, k, v = qkv(rng, Hkv=4)
    with pytest.raises(flexjit.ArgumentError, match="q"):
        kernel.forward(q.astype(np.float64), k, v)
    with pytest.raises(flexjit.ArgumentError):
        kernel.forward(q[..., :8], k, v)
    with pytest.raises(flexjit.ArgumentError, match="__dlpack__"):
        kernel.forward([[1.0]], k, v)


def test_unsupported_kernel_dtype():
    with pytest.raises(flexjit.UnsupportedError, match="int8"):
        flexjit.compile(os.path.join(EXAMPLES, "causal.py"), head_dim=16, dtype="int8", device="cpu")


def test_a_missing_file_is_an_error():
    with pytest.raises(flexjit.Error, match="no_such_program.py"):
        flexjit.compile("no_such_program.py", device="cpu")
