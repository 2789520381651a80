"""flexjit.ring on one GPU: a bf16 sequence sharded over 2-8 virtual ranks round a ring (each chunk
pair a CUDA kernel call at its global positions, the partial outputs merged by lse on the GPU, the
dk and dv sums travelling home) equals one call over the whole sequence within bf16 tolerance:
out, lse, dq, dk and dv, for causal, ALiBi, sliding-window, document (documents spanning shard
boundaries) and prefix-LM masks, and a captured bias table's gradient summed over the ranks.
Skipped without torch and a CUDA device (CI); the GPU host runs it."""

import os

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import flexjit  # noqa: E402
from conftest import EXAMPLES  # noqa: E402
from flexjit import ring  # noqa: E402

B, HQ, HKV, T, D = 2, 4, 2, 512, 64
DEV = "cuda"


def _bind(name):
    return {
        "causal": {},
        "alibi": {},
        "sliding_window": {"window": 100},
        # Documents of 37, 200, 11 and 264 positions: most shard boundaries fall inside one.
        "document": {"doc_ids": torch.repeat_interleave(torch.arange(4, dtype=torch.int32),
                                                        torch.tensor([37, 200, 11, 264])).to(DEV)},
        "prefix_lm": {"prefix_len": torch.tensor([70, 300], dtype=torch.int32, device=DEV)},
    }[name]


def _inputs(seed):
    gen = torch.Generator(device=DEV).manual_seed(seed)
    q = torch.randn(B, HQ, T, D, generator=gen, device=DEV).to(torch.bfloat16)
    k, v = (torch.randn(B, HKV, T, D, generator=gen, device=DEV).to(torch.bfloat16) for _ in range(2))
    dout = torch.randn(B, HQ, T, D, generator=gen, device=DEV).to(torch.bfloat16)
    return q, k, v, dout


def _rel(got, want):
    got, want = got.double(), want.double()
    return ((got - want).norm() / want.norm()).item()


@pytest.mark.parametrize("name", ["causal", "alibi", "sliding_window", "document", "prefix_lm"])
@pytest.mark.parametrize("world,sharding", [(2, "zigzag"), (4, "contiguous"), (8, "zigzag")])
def test_the_ring_on_one_gpu_is_one_call(name, world, sharding):
    kernel = flexjit.compile(os.path.join(EXAMPLES, f"{name}.py"), D, "bf16", DEV)
    bind = _bind(name)
    q, k, v, dout = _inputs(world)
    whole, whole_lse = kernel.forward(q, k, v, bind, return_lse=True)
    out, lse = ring.simulated_attention(kernel, q, k, v, world, sharding, bind)
    assert out.dtype == torch.bfloat16 and out.device.type == "cuda"
    # Each partial output is rounded to bf16 before the merge: a few bf16 steps apart at most.
    assert _rel(out, whole) < 1e-2, _rel(out, whole)
    assert (lse - whole_lse).abs().max().item() < 1e-3
    dq, dk, dv = kernel.backward(q, k, v, whole, whole_lse, dout, bind)
    rq, rk, rv = ring.simulated_backward(kernel, q, k, v, out, lse, dout, world, sharding, bind)
    for got, want, what in ((rq, dq, "dq"), (rk, dk, "dk"), (rv, dv, "dv")):
        assert _rel(got, want) < 2e-2, (what, _rel(got, want))


BIAS_PROGRAM = """bias: Tensor[float32, 2]

def score_mod(score, b, h, q_idx, kv_idx):
    return score + bias[h, q_idx - kv_idx + 511]

def mask_mod(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx
"""


def test_a_captured_tables_gradient_sums_over_the_ranks():
    kernel = flexjit.compile(BIAS_PROGRAM, D, "bf16", DEV)
    bias = torch.randn(HQ, 2 * T - 1, generator=torch.Generator(device=DEV).manual_seed(3), device=DEV)
    bind = {"bias": bias}
    q, k, v, dout = _inputs(11)
    whole, whole_lse = kernel.forward(q, k, v, bind, return_lse=True)
    _, _, _, want = kernel.backward(q, k, v, whole, whole_lse, dout, bind, grads=("bias",))
    out, lse = ring.simulated_attention(kernel, q, k, v, 4, "zigzag", bind)
    _, _, _, got = ring.simulated_backward(kernel, q, k, v, out, lse, dout, 4, "zigzag", bind, grads=("bias",))
    assert _rel(got["bias"], want["bias"]) < 2e-2, _rel(got["bias"], want["bias"])
