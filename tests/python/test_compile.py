"""flexjit.compile on every example program: a cpu kernel's forward and backward against the
float64 oracle, with the bindings each example declares."""

import glob
import os

import numpy as np
import pytest

import flexjit
from conftest import EXAMPLES, oracle_backward, oracle_forward, qkv, relative_l2

B, HQ, HKV, T, D = 2, 4, 2, 70, 16


def example_bindings(rng):
    """What each example binds (every example must have an entry: a new one fails here)."""
    doc_ids = np.repeat(np.arange(3, dtype=np.int32), [30, 25, 15])
    selected = np.full((B, HQ, 2, 2), -1, dtype=np.int32)
    selected[:, :, 0, 0] = 0
    selected[:, :, 1, :] = [1, 0]
    tokens = rng.integers(-1, T, size=(B, HKV, T, 8), dtype=np.int32)  # a key list per kv head and row
    tokens[..., 0] = np.arange(T)  # every row lists itself
    return {
        "alibi.py": {},
        "alibi_softcap_window.py": {"window": 24, "alibi_slopes": rng.uniform(0.1, 1, HQ).astype(np.float32)},
        "causal.py": {},
        "chunked.py": {},
        "decode_causal.py": {"offsets": np.array([0, 5], dtype=np.int32)},
        "dilated_window.py": {},
        "document.py": {"doc_ids": doc_ids},
        "document_window_sinks.py": {"doc_ids": doc_ids},
        "dsa_topk_causal.py": {"selected": tokens},
        "learned_sink.py": {"window": 16, "sinks": rng.standard_normal(HQ).astype(np.float32)},
        "neighbourhood_2d.py": {},
        "prefix_lm.py": {"prefix_len": np.array([10, 33], dtype=np.int32)},
        "relative_position_bias.py": {"rel_bias": rng.standard_normal((HQ, 257)).astype(np.float32)},
        "sink_window.py": {"window": 20},
        "sliding_window.py": {"window": 9},
        "softcap.py": {},
        "topk_causal.py": {"selected": selected},
        "two_sided_window.py": {"window": 7},
    }


EXAMPLE_FILES = sorted(os.path.basename(p) for p in glob.glob(os.path.join(EXAMPLES, "*.py")))


def test_every_example_has_bindings(rng):
    assert sorted(example_bindings(rng)) == EXAMPLE_FILES


@pytest.mark.parametrize("name", EXAMPLE_FILES)
def test_example_forward_and_backward_match_the_oracle(name, rng):
    bind = example_bindings(rng)[name]
    path = os.path.join(EXAMPLES, name)
    kernel = flexjit.compile(path, head_dim=D, dtype="float32", device="cpu")
    assert kernel.device == "cpu" and kernel.family == "cpu"
    q, k, v = qkv(rng, B, HQ, HKV, T, T, D)
    out, lse = kernel.forward(q, k, v, bind=bind, return_lse=True)
    text = open(path).read()
    ref_out, ref_lse = oracle_forward(text, q, k, v, bind)
    assert out.dtype == np.float32 and out.shape == q.shape and lse.shape == q.shape[:3]
    assert relative_l2(out, ref_out) < 1e-5
    assert relative_l2(lse, ref_lse) < 1e-5

    dout = rng.standard_normal(out.shape).astype(np.float32)
    grads = tuple(n for n, value in bind.items() if isinstance(value, np.ndarray) and value.dtype == np.float32)
    result = kernel.backward(q, k, v, out, lse, dout, bind=bind, grads=grads)
    ref_dq, ref_dk, ref_dv, ref_captures = oracle_backward(text, q, k, v, dout, bind)
    dq, dk, dv = result[:3]
    for got, ref in ((dq, ref_dq), (dk, ref_dk), (dv, ref_dv)):
        assert got.shape == ref.shape
        assert relative_l2(got, ref) < 1e-4
    for n in grads:
        assert relative_l2(result[3][n].ravel(), ref_captures[n]) < 1e-4


def test_fp16_kernel_rounds_its_inputs_only(rng):
    kernel = flexjit.compile(os.path.join(EXAMPLES, "causal.py"), head_dim=D, dtype="fp16", device="cpu")
    q, k, v = qkv(rng, dtype=np.float16)
    out = kernel.forward(q, k, v)
    assert out.dtype == np.float16
    ref_out, _ = oracle_forward(open(os.path.join(EXAMPLES, "causal.py")).read(), q, k, v)
    assert relative_l2(out, ref_out) < 2e-3


def test_strided_views_and_program_text(rng):
    text = "window: int\n\ndef mask_mod(b, h, q_idx, kv_idx):\n    return abs(q_idx - kv_idx) <= window\n"
    kernel = flexjit.compile(text, head_dim=D, dtype="float32", device="cpu")
    assert kernel.parameters() == [("window", "int", "i64", 0)]
    # [B, T, H, D] storage seen as [B, H, T, D]: every stride differs from the contiguous one.
    q, k, v = (np.ascontiguousarray(x.transpose(0, 2, 1, 3)).transpose(0, 2, 1, 3) for x in qkv(rng, Hkv=4))
    assert not q.flags.c_contiguous
    out = kernel.forward(q, k, v, bind={"window": 5}, scale=0.3)
    ref_out, _ = oracle_forward(text, q, k, v, {"window": 5}, 0.3)
    assert relative_l2(out, ref_out) < 1e-5


def test_cuda_source_is_generated_without_a_gpu():
    program = flexjit._flexjit.Program.from_file(os.path.join(EXAMPLES, "sliding_window.py"))
    source = flexjit._flexjit.generate_cuda_source(program, 128, flexjit._flexjit.DType.bf16, "sm_90a")
    assert 'extern "C"' in source and "window" in source


def test_backward_kernels_compile_ahead_once_without_a_gpu():
    """CUDA kernels compile with NVRTC alone: the backward ahead of its first call, on a thread of
    its own, once; a second request compiles nothing."""
    kernel = flexjit.compile(os.path.join(EXAMPLES, "sliding_window.py"), 64, "bf16", "cuda", arch="sm_80")
    engine = flexjit._kernel.engine()
    before = engine.counters()["compiles"] + engine.counters()["disk_hits"]
    thread = kernel.compile_backward_ahead()
    assert kernel.compile_backward_ahead() is thread
    thread.join(timeout=300)
    assert not thread.is_alive()
    after = engine.counters()["compiles"] + engine.counters()["disk_hits"]
    assert after > before
    kernel.compile_backward()  # already there: nothing compiled, nothing read
    assert engine.counters()["compiles"] + engine.counters()["disk_hits"] == after


def test_each_pass_reports_its_own_module_without_a_gpu():
    """ptx, cubin and compile_report take the pass: the backward's module is compiled when asked
    for and reported under its own entry and family; a pass name that is not one says so."""
    kernel = flexjit.compile(os.path.join(EXAMPLES, "causal.py"), 64, "bf16", "cuda", arch="sm_80")
    report = kernel.compile_report("backward")
    assert report["entry"] == "flexjit_bwd_causal_d64_bf16"
    assert report["family"] == "sm80_bwd"
    assert report["spill_bytes"] == 0 and report["registers"] > 0
    assert ".entry flexjit_bwd_causal_d64_bf16(" in kernel.ptx("backward")
    assert kernel.cubin("backward")[:4] == b"\x7fELF"
    assert kernel.compile_report()["entry"] == kernel.entry_name
    kernel.compile_chunk()  # chunked prefill against a KV cache: the sm80 forward reading pages
    chunk = kernel.compile_report("chunk")
    assert (chunk["entry"], chunk["family"], chunk["spill_bytes"]) == ("flexjit_chunk_causal_d64_bf16", "sm80_chunk", 0)
    with pytest.raises(ValueError, match="pass: expected 'forward', 'decode', 'backward' or 'chunk', got 'bwd'"):
        kernel.ptx("bwd")


def test_backward_variants_compile_ahead_each_once_without_a_gpu():
    """The backward module with the scatter into a captured tensor's gradient is a variant of its
    own: asking for it ahead compiles it (once), beside the one without."""
    kernel = flexjit.compile(os.path.join(EXAMPLES, "relative_position_bias.py"), 64, "bf16", "cuda", arch="sm_80")
    engine = flexjit._kernel.engine()
    count = lambda: engine.counters()["compiles"] + engine.counters()["disk_hits"]  # noqa: E731
    plain = kernel.compile_backward_ahead()
    scatter = kernel.compile_backward_ahead(("rel_bias",))
    assert scatter is not plain and kernel.compile_backward_ahead(("rel_bias",)) is scatter
    for thread in (plain, scatter):
        thread.join(timeout=300)
    before = count()
    kernel.compile_backward()
    kernel.compile_backward(grads=("rel_bias",))
    assert count() == before  # both already there
    assert kernel.compile_report("backward")["entry"] == "flexjit_bwd_relative_position_bias_d64_bf16"


def test_a_value_head_dim_of_its_own_on_the_cpu(rng):
    """v (and so out, dout and dv) with a head dim of its own, as MLA's prefill has: forward and
    backward against the float64 oracle, the kernel saying both head dims."""
    q = rng.standard_normal((B, HQ, T, 24)).astype(np.float32)
    k = rng.standard_normal((B, HKV, T, 24)).astype(np.float32)
    v = rng.standard_normal((B, HKV, T, 16)).astype(np.float32)
    dout = rng.uniform(-1, 1, (B, HQ, T, 16)).astype(np.float32)
    path = os.path.join(EXAMPLES, "causal.py")
    kernel = flexjit.compile(path, 24, "float32", "cpu", head_dim_v=16)
    assert (kernel.head_dim, kernel.head_dim_v) == (24, 16)
    out, lse = kernel.forward(q, k, v, return_lse=True)
    assert out.shape == (B, HQ, T, 16)
    text = open(path).read()
    ref_out, _ = oracle_forward(text, q, k, v, {})
    assert relative_l2(out, ref_out) < 1e-6
    dq, dk, dv = kernel.backward(q, k, v, out, lse, dout)
    assert (dq.shape, dk.shape, dv.shape) == (q.shape, k.shape, v.shape)
    ref = oracle_backward(text, q, k, v, dout, {})
    for got, want in zip((dq, dk, dv), ref[:3]):
        assert relative_l2(got, want) < 1e-5


TOKEN_CAUSAL = """
selected: TokenIndices

def mask_mod(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx
"""


def test_token_level_top_k_on_the_cpu(rng):
    """Each query row attends to the keys its int32 list names (-1 unused, repeats once; one list
    per kv head): forward and backward against the float64 oracle; on CUDA the decode kernel serves
    the forward, and the backward is refused by name."""
    q, k, v = qkv(rng)
    selected = rng.integers(-1, T, (B, HKV, T, 12)).astype(np.int32)
    kernel = flexjit.compile(TOKEN_CAUSAL, D, "float32", "cpu")
    assert kernel.parameters() == [("selected", "token_indices", "i32", 4)]
    bind = {"selected": selected}
    out, lse = kernel.forward(q, k, v, bind=bind, return_lse=True)
    ref_out, ref_lse = oracle_forward(TOKEN_CAUSAL, q, k, v, bind)
    assert relative_l2(out, ref_out) < 1e-6
    dout = rng.uniform(-1, 1, out.shape).astype(np.float32)
    dq, dk, dv = kernel.backward(q, k, v, out, lse, dout, bind=bind)
    for got, want in zip((dq, dk, dv), oracle_backward(TOKEN_CAUSAL, q, k, v, dout, bind)[:3]):
        assert relative_l2(got, want) < 1e-5
    selected[0, 1, 3, 0] = T  # past the last key
    with pytest.raises(flexjit.ArgumentError, match=r"token indices 'selected': entry \[0, 1, 3, 0\] = 70 is not a key position \(0\.\.69\) or -1"):
        kernel.forward(q, k, v, bind=bind)
    for family in ("", "decode"):
        cuda = flexjit.compile(TOKEN_CAUSAL, 128, "bf16", "cuda", arch="sm_90a", family=family)
        assert cuda.family == "decode"  # one query token per CTA gathers its listed keys
    with pytest.raises(flexjit.UnsupportedError, match="the backward of token-level selection"):
        cuda.compile_backward()


def test_global_positions_of_a_shard_on_the_cpu(rng):
    """q_offset / kv_offset: a causal ALiBi sequence cut into two key shards, each run with its own
    kv_offset and merged by flexjit.merge_attention, is the whole sequence; each shard's backward
    given the merged out and lse is the whole backward's share."""
    q, k, v = qkv(rng, B=1, Hq=2, Hkv=2, Tq=30, Tkv=50, D=8)
    kernel = flexjit.compile(os.path.join(EXAMPLES, "alibi.py"), 8, "float32", "cpu")
    whole, whole_lse = kernel.forward(q, k, v, return_lse=True, q_offset=20)
    cuts = ((0, 23), (23, 50))
    parts = [kernel.forward(q, k[:, :, lo:hi], v[:, :, lo:hi], return_lse=True, q_offset=20, kv_offset=lo)
             for lo, hi in cuts]
    merged, merged_lse = flexjit.merge_attention(parts)
    assert relative_l2(merged, whole) < 1e-6
    assert np.abs(merged_lse - whole_lse).max() < 1e-5
    dout = rng.uniform(-1, 1, whole.shape).astype(np.float32)
    dq, dk, dv = kernel.backward(q, k, v, whole, whole_lse, dout, q_offset=20)
    shard_dq = np.zeros_like(dq)
    for lo, hi in cuts:
        dqi, dki, dvi = kernel.backward(q, k[:, :, lo:hi], v[:, :, lo:hi], merged, merged_lse, dout, q_offset=20,
                                        kv_offset=lo)
        shard_dq += dqi
        assert relative_l2(dki, dk[:, :, lo:hi]) < 1e-5 and relative_l2(dvi, dv[:, :, lo:hi]) < 1e-5
    assert relative_l2(shard_dq, dq) < 1e-5
    with pytest.raises(flexjit.ArgumentError, match=r"parts\[1\].lse: expected shape \[1, 2, 30\]"):
        flexjit.merge_attention([parts[0], (parts[1][0], parts[1][1][:, :, :5])])
    at_zero = kernel.forward(q, k, v)
    assert relative_l2(at_zero, whole) > 0.1  # the offsets move the causal boundary
    dq0, _, _ = kernel.backward(q, k, v, at_zero, kernel.forward(q, k, v, return_lse=True)[1], dout)
    assert relative_l2(dq, dq0) > 0.1
    with pytest.raises(flexjit.ArgumentError, match="kv_offset is -3: positions start at 0 or later"):
        kernel.forward(q, k, v, kv_offset=-3)
