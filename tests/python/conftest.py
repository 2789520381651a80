"""What the Python tests share: random inputs, the float64 oracle (tests/support, through
_flexjit_oracle) and the comparison the C++ cpu tests make (relative L2 over all elements)."""

import os

import numpy as np
import pytest

import flexjit

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(REPO, "examples")


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


def qkv(rng, B=2, Hq=4, Hkv=2, Tq=70, Tkv=70, D=16, dtype=np.float32):
    q = rng.standard_normal((B, Hq, Tq, D)).astype(dtype)
    k = rng.standard_normal((B, Hkv, Tkv, D)).astype(dtype)
    v = rng.standard_normal((B, Hkv, Tkv, D)).astype(dtype)
    return q, k, v


def relative_l2(got, ref):
    got = np.asarray(got, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    finite = np.isfinite(ref)
    assert np.array_equal(got[~finite], ref[~finite]), "non-finite elements differ"
    diff = np.linalg.norm(got[finite] - ref[finite])
    norm = np.linalg.norm(ref[finite])
    return diff / norm if norm > 0 else diff


def oracle_forward(text, q, k, v, bind=None, scale=None):
    import _flexjit_oracle as oracle  # built with the test suite
    from flexjit._kernel import bound_values

    return oracle.forward(text, q.astype(np.float32), k.astype(np.float32), v.astype(np.float32),
                          bound_values(bind), scale)


def oracle_backward(text, q, k, v, dout, bind=None, scale=None):
    import _flexjit_oracle as oracle
    from flexjit._kernel import bound_values

    return oracle.backward(text, q.astype(np.float32), k.astype(np.float32), v.astype(np.float32),
                           dout.astype(np.float32), bound_values(bind), scale)
