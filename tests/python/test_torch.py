"""flexjit.torch.flex_attention against torch's own flex_attention on a CUDA device: outputs, lse
and gradients (q, k, v, captured tensors) for mods written the ways model code writes them.
Skipped where torch or a GPU is missing (CI); scripts/gpu-test runs it on a GPU host."""

import functools

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("needs a CUDA device", allow_module_level=True)

from torch.nn.attention.flex_attention import and_masks, create_block_mask, flex_attention, or_masks  # noqa: E402

import flexjit.torch as fj  # noqa: E402

B, HQ, HKV, T, D = 2, 8, 2, 1000, 64


def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def window(width):
    return lambda b, h, q_idx, kv_idx: (q_idx - kv_idx).abs() < width


def inputs(dtype=torch.bfloat16, Hkv=HKV, requires_grad=True):
    gen = torch.Generator(device="cuda").manual_seed(0)
    q = torch.randn(B, HQ, T, D, device="cuda", dtype=dtype, generator=gen)
    k = torch.randn(B, Hkv, T, D, device="cuda", dtype=dtype, generator=gen)
    v = torch.randn(B, Hkv, T, D, device="cuda", dtype=dtype, generator=gen)
    return [x.requires_grad_(requires_grad) for x in (q, k, v)]


def compare(score_mod=None, mask_mod=None, captures=(), Hkv=HKV):
    q, k, v = inputs(Hkv=Hkv)
    block_mask = create_block_mask(mask_mod, B, HQ, T, T) if mask_mod is not None else None
    results = []
    for attention in (fj.flex_attention, flex_attention):
        for x in (q, k, v, *captures):
            x.grad = None
        out, lse = attention(q, k, v, score_mod=score_mod, block_mask=block_mask, enable_gqa=Hkv != HQ,
                             return_lse=True)
        out.float().pow(2).sum().backward()
        results.append([out, lse, q.grad, k.grad, v.grad] + [c.grad for c in captures])
    for got, ref in zip(*results):
        scale = ref.float().abs().max().item() + 1e-6
        assert (got.float() - ref.float()).abs().max().item() / scale < 3e-2


def test_causal():
    compare(mask_mod=causal)


def test_closure_window_and_combinators():
    compare(mask_mod=and_masks(causal, window(128)))
    compare(mask_mod=or_masks(window(32), lambda b, h, q_idx, kv_idx: kv_idx < 4))


def test_alibi_with_learned_slopes():
    slopes = torch.rand(HQ, device="cuda", requires_grad=True)

    def alibi(score, b, h, q_idx, kv_idx):
        return score - slopes[h] * (q_idx - kv_idx).abs()

    compare(score_mod=alibi, captures=(slopes,))


def test_documents_and_partial():
    doc_ids = torch.repeat_interleave(torch.arange(4, device="cuda"), torch.tensor([300, 200, 400, 100], device="cuda"))

    def same_doc(b, h, q_idx, kv_idx, ids):
        return ids[q_idx] == ids[kv_idx]

    compare(mask_mod=and_masks(causal, functools.partial(same_doc, ids=doc_ids)))


def test_a_call_without_gradients_gives_plain_tensors():
    """Under no_grad (and with inputs that want none) the kernel runs directly: the same figures
    as the call that records the graph, and no graph."""
    q, k, v = inputs()
    block_mask = create_block_mask(causal, B, HQ, T, T)
    recorded = fj.flex_attention(q, k, v, block_mask=block_mask, enable_gqa=True)
    with torch.no_grad():
        plain = fj.flex_attention(q, k, v, block_mask=block_mask, enable_gqa=True)
    detached = fj.flex_attention(*(x.detach() for x in (q, k, v)), block_mask=block_mask, enable_gqa=True)
    assert recorded.grad_fn is not None
    assert plain.grad_fn is None and detached.grad_fn is None
    assert torch.equal(plain, recorded.detach()) and torch.equal(detached, plain)


def test_gradients_reach_a_capture_when_q_k_v_want_none():
    slopes = torch.rand(HQ, device="cuda", requires_grad=True)

    def alibi(score, b, h, q_idx, kv_idx):
        return score - slopes[h] * (q_idx - kv_idx).abs()

    q, k, v = inputs(requires_grad=False)
    grads = []
    for attention in (fj.flex_attention, flex_attention):
        slopes.grad = None
        attention(q, k, v, score_mod=alibi, enable_gqa=True).float().pow(2).sum().backward()
        grads.append(slopes.grad.clone())
    assert (grads[0] - grads[1]).abs().max().item() / grads[1].abs().max().item() < 3e-2


def test_new_values_do_not_recompile():
    q, k, v = inputs(requires_grad=False)
    fj.flex_attention(q, k, v, block_mask=create_block_mask(window(16), B, HQ, T, T), enable_gqa=True)
    kernels = len(fj._attention._kernels)
    fj.flex_attention(q, k, v, block_mask=create_block_mask(window(64), B, HQ, T, T), enable_gqa=True)
    assert len(fj._attention._kernels) == kernels


def test_deterministic_algorithms_give_the_same_gradients_twice():
    """Under torch.use_deterministic_algorithms(True) the backward adds dQ in a fixed order: two
    runs give the same gradients bit for bit (and they still match torch's flex_attention)."""
    previous = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True, warn_only=True)
    try:
        compare(mask_mod=causal)
        q, k, v = inputs()
        runs = []
        for _ in range(2):
            for x in (q, k, v):
                x.grad = None
            fj.flex_attention(q, k, v, block_mask=create_block_mask(causal, B, HQ, T, T),
                              enable_gqa=True).float().pow(2).sum().backward()
            runs.append([x.grad.clone() for x in (q, k, v)])
        for first, second in zip(*runs):
            assert torch.equal(first, second)
    finally:
        torch.use_deterministic_algorithms(previous)


def compiled_matches_eager(model, *tensors, parameters=(), backend="aot_eager"):
    """model(*tensors) compiled with fullgraph=True (no graph break) against the same call run
    eagerly: outputs and the gradients of every tensor (and parameter) that wants one."""
    results = []
    for run in (model, torch.compile(model, fullgraph=True, backend=backend)):
        for x in (*tensors, *parameters):
            x.grad = None
        out = run(*tensors)
        out.float().pow(2).sum().backward()
        results.append([out] + [x.grad for x in (*tensors, *parameters) if x.requires_grad])
    for got, ref in zip(*results):
        assert got is not None and ref is not None
        assert (got.float() - ref.float()).abs().max().item() <= 1e-3 * (ref.float().abs().max().item() + 1e-6)


SLOPES = torch.rand(HQ, device="cuda")
CAUSAL_MASK = create_block_mask(causal, None, None, T, T)


def global_alibi(score, b, h, q_idx, kv_idx):
    return score - SLOPES[h] * (q_idx - kv_idx).abs()


def test_torch_compile_fullgraph_closures_globals_and_partials():
    """torch.compile(fullgraph=True) over a model calling flexjit.torch.flex_attention: mods that
    read closures (a learned tensor, an int), globals and partials trace without a graph break and
    give the eager call's output and gradients (captured tensor included)."""
    q, k, v = inputs()
    slopes = torch.rand(HQ, device="cuda", requires_grad=True)
    width = 200

    def alibi(score, b, h, q_idx, kv_idx):
        return score - slopes[h] * (q_idx - kv_idx).abs()

    def windowed(b, h, q_idx, kv_idx):
        return (q_idx >= kv_idx) & (q_idx - kv_idx < width)

    block_mask = create_block_mask(windowed, B, HQ, T, T)

    def model(q, k, v, slopes):
        return fj.flex_attention(q, k, v, score_mod=alibi, block_mask=block_mask, enable_gqa=True)

    compiled_matches_eager(model, q, k, v, slopes)

    doc_ids = torch.repeat_interleave(torch.arange(4, device="cuda"), torch.tensor([300, 200, 400, 100], device="cuda"))

    def same_doc(b, h, q_idx, kv_idx, ids):
        return ids[q_idx] == ids[kv_idx]

    documents = create_block_mask(and_masks(causal, functools.partial(same_doc, ids=doc_ids)), B, HQ, T, T)

    def model2(q, k, v):
        return fj.flex_attention(q, k, v, score_mod=global_alibi, block_mask=documents, enable_gqa=True)

    compiled_matches_eager(model2, q, k, v)


def test_torch_compile_reads_new_values_without_compiling_a_kernel():
    """A compiled model whose mods read new values (a new int, a new tensor) gives the eager
    results for each, and compiles no new flexjit kernel."""
    q, k, v = inputs(requires_grad=False)
    state = {"width": 64, "bias": torch.zeros(HQ, device="cuda")}

    def score_mod(score, b, h, q_idx, kv_idx):
        return score + state["bias"][h]

    def mask_mod(b, h, q_idx, kv_idx):
        return (q_idx - kv_idx).abs() < state["width"]

    block_mask = create_block_mask(mask_mod, B, HQ, T, T)
    compiled = torch.compile(lambda q, k, v: fj.flex_attention(q, k, v, score_mod=score_mod, block_mask=block_mask,
                                                                enable_gqa=True), fullgraph=True, backend="aot_eager")
    compiled(q, k, v)
    kernels = len(fj._attention._kernels)
    for width, bias in ((100, torch.ones(HQ, device="cuda")), (300, torch.rand(HQ, device="cuda"))):
        state["width"], state["bias"] = width, bias
        got = compiled(q, k, v)
        ref = fj.flex_attention(q, k, v, score_mod=score_mod, block_mask=block_mask, enable_gqa=True)
        assert (got.float() - ref.float()).abs().max().item() == 0
    assert len(fj._attention._kernels) == kernels


def test_torch_compile_with_inductor_and_a_mod_made_by_the_module():
    """The default backend (inductor), with the mod made in the module's __init__ (outside the
    compiled forward) reading the module's parameter through `self`: the parameter gets its
    gradient. (A mod defined inside the compiled forward cannot be traced: docs/python.md.)"""

    class Layer(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.slopes = torch.nn.Parameter(torch.rand(HQ, device="cuda"))

            def alibi(score, b, h, q_idx, kv_idx):
                return score - self.slopes[h] * (q_idx - kv_idx).abs()

            self.score_mod = alibi

        def forward(self, q, k, v):
            return fj.flex_attention(q, k, v, score_mod=self.score_mod, enable_gqa=True)

    layer = Layer()
    q, k, v = inputs()
    compiled_matches_eager(layer, q, k, v, parameters=(layer.slopes,), backend="inductor")


def test_torch_compile_with_inductor_on_views_of_a_packed_projection():
    """q, k and v as views of one [B, T, 3, H, D] projection (how a model's qkv layer gives them,
    none of them row-major): inductor checks every result's strides against the op's fake ones,
    forward and backward, and the compiled call gives the eager output and gradients."""
    qkv = torch.randn(B, T, 3, HQ, D, device="cuda", dtype=torch.bfloat16, requires_grad=True)

    def model(qkv):
        q, k, v = qkv.permute(2, 0, 3, 1, 4)
        return fj.flex_attention(q, k, v, block_mask=CAUSAL_MASK)

    compiled_matches_eager(model, qkv, backend="inductor")


def test_fallback_runs_torch_flex_attention_and_says_so_once():
    """With flexjit.torch.fallback on, a mod flexjit cannot compile runs on PyTorch's
    flex_attention with one warning naming the reason; off (the default), the error is raised."""
    q, k, v = inputs(requires_grad=False)
    label = "not a number"

    def unreadable(score, b, h, q_idx, kv_idx):
        return score if label else score

    from flexjit.errors import CompileError

    with pytest.raises(CompileError, match="'label' is a str"):
        fj.flex_attention(q, k, v, score_mod=unreadable, enable_gqa=True)
    fj.fallback = True
    try:
        with pytest.warns(UserWarning, match="running PyTorch's flex_attention instead") as caught:
            got = fj.flex_attention(q, k, v, score_mod=unreadable, enable_gqa=True)
            fj.flex_attention(q, k, v, score_mod=unreadable, enable_gqa=True)
        assert len([w for w in caught if "flex_attention instead" in str(w.message)]) == 1
    finally:
        fj.fallback = False
    ref = flex_attention(q, k, v, score_mod=unreadable, enable_gqa=True)
    assert (got.float() - ref.float()).abs().max().item() == 0


def test_a_block_mask_that_selects_blocks_by_its_tensors_is_not_read_as_dense():
    """BlockMask.from_kv_blocks without a mask_mod (noop_mask): its tensors alone select the key
    blocks, and flexjit reads a BlockMask's mask_mod only, so the call is refused (with fallback on,
    PyTorch's flex_attention runs it). A noop mask that lists every block is dense and runs here."""
    from torch.nn.attention.flex_attention import BlockMask, noop_mask

    from flexjit.errors import UnsupportedError

    q, k, v = inputs(requires_grad=False)
    n = -(-T // 128)
    blocks = torch.arange(n, dtype=torch.int32, device="cuda")
    diagonal = BlockMask.from_kv_blocks(torch.ones(1, 1, n, dtype=torch.int32, device="cuda"),
                                        blocks.view(1, 1, n, 1).expand(1, 1, n, n).contiguous(), seq_lengths=(T, T))
    with pytest.raises(UnsupportedError, match="selects key blocks by its tensors alone"):
        fj.flex_attention(q, k, v, block_mask=diagonal, enable_gqa=True)
    fj.fallback = True
    try:
        with pytest.warns(UserWarning, match="running PyTorch's flex_attention instead"):
            got = fj.flex_attention(q, k, v, block_mask=diagonal, enable_gqa=True)
    finally:
        fj.fallback = False
    ref = flex_attention(q, k, v, block_mask=diagonal, enable_gqa=True)
    assert (got.float() - ref.float()).abs().max().item() == 0
    dense = create_block_mask(noop_mask, None, None, T, T)
    out = fj.flex_attention(q, k, v, block_mask=dense, enable_gqa=True)
    ref = flex_attention(q, k, v, enable_gqa=True)
    assert (out.float() - ref.float()).norm() / ref.float().norm() < 1e-2


def test_float8_tensors_run_an_fp8_kernel_and_flex_attention_refuses_them():
    """torch.float8_e4m3fn tensors cross as uint8 views tagged fp8_e4m3 (torch's own DLPack export
    of float8 varies with its version). On the host they run the cpu fp8 kernel: bf16 out, the same
    values as the same codes given from numpy through flexjit.e4m3. flex_attention, which has no
    descale factors, refuses them."""
    import flexjit

    gen = torch.Generator().manual_seed(0)
    q, k, v = ((4 * torch.randn(2, 4, 40, 16, generator=gen)).to(torch.float8_e4m3fn) for _ in range(3))
    q_descale, k_descale, v_descale = (torch.rand(2, 4, generator=gen) + 0.5 for _ in range(3))
    out = flexjit.attention(q, k, v, mask_mod=causal, q_descale=q_descale, k_descale=k_descale, v_descale=v_descale)
    assert out.dtype == torch.bfloat16
    from_numpy = flexjit.attention(*(flexjit.e4m3(x.view(torch.uint8).numpy()) for x in (q, k, v)), mask_mod=causal,
                                   q_descale=q_descale.numpy(), k_descale=k_descale.numpy(),
                                   v_descale=v_descale.numpy())
    assert torch.equal(out.float(), torch.from_numpy(from_numpy))
    with pytest.raises(flexjit.ArgumentError, match="float8_e4m3fn"):
        fj.flex_attention(q, k, v)
