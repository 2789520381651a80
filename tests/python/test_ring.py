"""flexjit.ring on cpu kernels: a sequence sharded over 2-8 virtual ranks round a ring (each chunk
pair a call with global positions, partial results merged by lse; the sums of dk and dv
travelling home after their shard) equals one call over the whole sequence: out, lse and every gradient, for causal,
sliding-window, document (documents spanning shard boundaries), prefix-LM and ALiBi masks; chunk
pairs the mask keeps nothing of cost no call."""

import os

import numpy as np
import pytest

import flexjit
from conftest import EXAMPLES, qkv, relative_l2
from flexjit import ring

T = 48


def kernel_and_bind(name, rng):
    kernel = flexjit.compile(os.path.join(EXAMPLES, f"{name}.py"), 8, "float32", "cpu")
    bind = {
        "causal": {},
        "alibi": {},  # slopes computed from the head index
        "sliding_window": {"window": 7},
        # Documents of 5, 17, 3 and 23 positions: most shard boundaries fall inside one.
        "document": {"doc_ids": np.repeat(np.arange(4, dtype=np.int32), [5, 17, 3, 23])},
        "prefix_lm": {"prefix_len": np.array([11, 30], np.int32)},
    }[name]
    return kernel, bind


@pytest.mark.parametrize("name", ["causal", "alibi", "sliding_window", "document", "prefix_lm"])
@pytest.mark.parametrize("world,sharding", [(1, "zigzag"), (2, "zigzag"), (3, "contiguous"), (4, "zigzag"), (8, "zigzag"),
                                            (8, "contiguous")])
def test_the_ring_is_one_call(name, world, sharding, rng):
    kernel, bind = kernel_and_bind(name, rng)
    q, k, v = qkv(rng, B=2, Hq=4, Hkv=2, Tq=T, Tkv=T, D=8)
    whole, whole_lse = kernel.forward(q, k, v, bind, return_lse=True)
    out, lse = ring.simulated_attention(kernel, q, k, v, world, sharding, bind)
    assert relative_l2(out, whole) < 1e-5
    assert np.abs(lse - whole_lse).max() < 1e-4
    dout = rng.uniform(-1, 1, whole.shape).astype(np.float32)
    dq, dk, dv = kernel.backward(q, k, v, whole, whole_lse, dout, bind)
    rq, rk, rv = ring.simulated_backward(kernel, q, k, v, out, lse, dout, world, sharding, bind)
    assert relative_l2(rq, dq) < 1e-4
    assert relative_l2(rk, dk) < 1e-4
    assert relative_l2(rv, dv) < 1e-4


def test_zigzag_balances_a_causal_mask():
    """Each rank's share of the causal (query, key) pairs under zigzag sharding is the same."""
    for world in (2, 4, 8):
        chunks = ring.shard_chunks(64 * world, world, "zigzag")
        work = [sum(qi + 1 for a, b in c for qi in range(a, b)) for c in chunks]  # keys <= each query
        assert max(work) == min(work), (world, work)
        contiguous = ring.shard_chunks(64 * world, world, "contiguous")
        assert [len(c) for c in contiguous] == [1] * world


def test_shardings_cover_the_sequence_once():
    for T_, world in ((48, 8), (50, 3), (7, 3)):
        for sharding in ring.SHARDINGS:
            if T_ < (2 * world if sharding == "zigzag" else world):
                continue
            cover = sorted(x for c in ring.shard_chunks(T_, world, sharding) for a, b in c for x in range(a, b))
            assert cover == list(range(T_))


def test_bad_ring_arguments_are_named(rng):
    with pytest.raises(flexjit.ArgumentError,
                       match="sharding: expected one of zigzag, contiguous or the chunks of each rank, got 'round'"):
        ring.shard_chunks(48, 2, "round")
    with pytest.raises(flexjit.ArgumentError, match="a sequence of 10 positions cannot be cut into 16 chunks for 8"):
        ring.shard_chunks(10, 8)
    with pytest.raises(flexjit.ArgumentError, match="world: expected a positive number of ranks, got 0"):
        ring.shard_chunks(48, 0)
    kernel, _ = kernel_and_bind("causal", rng)
    q, k, v = qkv(rng, B=1, Hq=2, Hkv=2, Tq=16, Tkv=24, D=8)
    with pytest.raises(flexjit.ArgumentError, match="q has 16 positions and k 24"):
        ring.simulated_attention(kernel, q, k, v, 2)


class CountingKernel:
    """A kernel whose forward and backward calls are counted (the rest passes through)."""

    def __init__(self, kernel):
        self._kernel, self.forwards, self.backwards = kernel, 0, 0

    def __getattr__(self, name):
        return getattr(self._kernel, name)

    def forward(self, *args, **kwargs):
        self.forwards += 1
        return self._kernel.forward(*args, **kwargs)

    def backward(self, *args, **kwargs):
        self.backwards += 1
        return self._kernel.backward(*args, **kwargs)


@pytest.mark.parametrize("world,sharding", [(4, "zigzag"), (3, "contiguous")])
def test_chunk_pairs_the_mask_keeps_nothing_of_cost_no_call(world, sharding, rng):
    """Under a causal mask a query chunk before a key chunk is skipped, forward and backward; the
    result is still the whole call's."""
    kernel, bind = kernel_and_bind("causal", rng)
    counting = CountingKernel(kernel)
    q, k, v = qkv(rng, B=1, Hq=2, Hkv=2, Tq=T, Tkv=T, D=8)
    chunks = [c for rank in ring.shard_chunks(T, world, sharding) for c in rank]
    reached = sum(1 for qa, qb in chunks for ka, kb in chunks if qb - 1 >= ka)  # some key <= some query
    assert reached < len(chunks) ** 2
    out, lse = ring.simulated_attention(counting, q, k, v, world, sharding, bind)
    assert counting.forwards == reached
    whole, whole_lse = kernel.forward(q, k, v, bind, return_lse=True)
    assert relative_l2(out, whole) < 1e-5
    dout = rng.uniform(-1, 1, whole.shape).astype(np.float32)
    rq, rk, rv = ring.simulated_backward(counting, q, k, v, out, lse, dout, world, sharding, bind)
    assert counting.backwards == reached
    dq, dk, dv = kernel.backward(q, k, v, whole, whole_lse, dout, bind)
    assert relative_l2(rq, dq) < 1e-4 and relative_l2(rk, dk) < 1e-4 and relative_l2(rv, dv) < 1e-4


def test_shards_travel_while_the_step_computes(rng):
    """What a transport overlaps: a rank yields its keys and values before the step's calls and reads
    the next shard only after them; the backward's dk / dv sums leave after the calls that add to
    them. Rank 0 of a two-rank ring driven by hand, with receipts that note when they are read."""
    kernel, bind = kernel_and_bind("causal", rng)
    counting = CountingKernel(kernel)
    q, k, v = qkv(rng, B=1, Hq=2, Hkv=2, Tq=T, Tkv=T, D=8)
    mine, theirs = ring.shard_chunks(T, 2, "zigzag")
    kept = lambda queries, keys: sum(1 for qa, qb in queries for ka, kb in keys if qb - 1 >= ka)  # causal
    first_step = kept(mine, mine)
    assert first_step > 0 and kept(mine, theirs) > 0
    rows = lambda x, chunks: [(a, x[:, :, a:b]) for a, b in chunks]
    kv = lambda chunks: [(a, k[:, :, a:b], v[:, :, a:b]) for a, b in chunks]
    offsets = lambda shard: [piece[0] for piece in shard]
    calls_when_read = []

    def receipt(message):
        def receive():
            calls_when_read.append(counting.forwards + counting.backwards)
            return message
        return receive

    g = ring.rank_forward(counting, rows(q, mine), kv(mine), 2, bind)
    assert offsets(next(g)) == [a for a, _ in mine] and counting.forwards == 0  # handed over before any call
    with pytest.raises(StopIteration):
        g.send(receipt(kv(theirs)))
    assert calls_when_read == [first_step]  # read once the first step's calls were made

    out, lse = kernel.forward(q, k, v, bind, return_lse=True)
    calls_when_read.clear()
    counting.forwards = counting.backwards = 0
    g = ring.rank_backward(counting, rows(q, mine), kv(mine), [o for _, o in rows(out, mine)],
                           [np.ascontiguousarray(x) for _, x in rows(lse, mine)], [o for _, o in rows(out, mine)],
                           2, bind)
    assert offsets(next(g)) == [a for a, _ in mine] and counting.backwards == 0  # the keys leave first
    sums = g.send(receipt(kv(theirs)))  # then the step's calls, then its sums
    assert counting.backwards == first_step and len(sums) == len(mine) and calls_when_read == []
    assert all(np.any(dk != 0) for dk, _ in sums)
    sums = g.send(receipt(sums))  # the last step: the sums come back, then the keys are read
    assert calls_when_read == [first_step, first_step] and counting.backwards == first_step + kept(mine, theirs)
    with pytest.raises(StopIteration):
        g.send(receipt(sums))


def test_queries_no_shard_reaches_get_zero_and_minus_infinity(rng):
    """Only queries 0..15 see keys: the chunks past them make no call at all and come out 0 with
    lse -inf, as one call gives them."""
    kernel = flexjit.compile("def mask_mod(b, h, q_idx, kv_idx):\n    return (q_idx < 16) & (kv_idx <= q_idx)\n",
                             8, "float32", "cpu")
    q, k, v = qkv(rng, B=1, Hq=2, Hkv=2, Tq=T, Tkv=T, D=8)
    counting = CountingKernel(kernel)
    out, lse = ring.simulated_attention(counting, q, k, v, 2, "zigzag")  # chunks of 12 positions
    assert counting.forwards == 1 + 2  # query chunk 0 with key chunk 0, chunk 1 with chunks 0 and 1
    whole, whole_lse = kernel.forward(q, k, v, return_lse=True)
    assert np.all(whole[:, :, 16:] == 0) and np.all(np.isneginf(whole_lse[:, :, 16:]))
    assert relative_l2(out, whole) < 1e-5
    assert np.array_equal(np.isneginf(lse), np.isneginf(whole_lse))
    assert np.all(out[:, :, 24:] == 0)


def test_may_keep_any(rng):
    kernel, _ = kernel_and_bind("causal", rng)
    assert kernel.may_keep_any(16, 16, q_offset=16, kv_offset=0)
    assert kernel.may_keep_any(16, 16, q_offset=0, kv_offset=15)  # query 15 sees key 15
    assert not kernel.may_keep_any(16, 16, q_offset=0, kv_offset=16)
    window, _ = kernel_and_bind("sliding_window", rng)
    assert not window.may_keep_any(16, 16, {"window": 7}, q_offset=100, kv_offset=0)
    assert window.may_keep_any(16, 16, {"window": 100}, q_offset=100, kv_offset=0)
    with pytest.raises(flexjit.ArgumentError, match="'window' is not bound"):
        window.may_keep_any(16, 16, q_offset=100)
    with pytest.raises(flexjit.ArgumentError, match="q_offset is -1: positions start at 0 or later"):
        kernel.may_keep_any(16, 16, q_offset=-1)


def test_programs_with_a_sink_are_refused(rng):
    kernel = flexjit.compile(os.path.join(EXAMPLES, "learned_sink.py"), 8, "float32", "cpu")
    q, k, v = qkv(rng, B=1, Hq=2, Hkv=2, Tq=16, Tkv=16, D=8)
    with pytest.raises(flexjit.UnsupportedError, match="its sink would be counted once per key shard"):
        ring.simulated_attention(kernel, q, k, v, 2)


@pytest.mark.parametrize("world,sharding", [(2, "zigzag"), (3, "contiguous"), (4, "zigzag")])
def test_captured_tensor_gradients_sum_over_the_ranks(world, sharding, rng):
    """A relative-position bias table indexed by global positions (kv_idx - q_idx): the ranks'
    shares of its gradient sum to one call's, and a single rank's share is not the whole."""
    kernel = flexjit.compile(os.path.join(EXAMPLES, "relative_position_bias.py"), 8, "float32", "cpu")
    bind = {"rel_bias": rng.uniform(-1, 1, (4, 257)).astype(np.float32)}
    q, k, v = qkv(rng, B=2, Hq=4, Hkv=2, Tq=T, Tkv=T, D=8)
    out, lse = kernel.forward(q, k, v, bind, return_lse=True)
    dout = rng.uniform(-1, 1, out.shape).astype(np.float32)
    dq, dk, dv, want = kernel.backward(q, k, v, out, lse, dout, bind, grads=("rel_bias",))
    rq, rk, rv, got = ring.simulated_backward(kernel, q, k, v, out, lse, dout, world, sharding, bind,
                                              grads=("rel_bias",))
    assert set(got) == {"rel_bias"} and got["rel_bias"].dtype == np.float32
    assert relative_l2(got["rel_bias"], want["rel_bias"]) < 1e-4
    assert relative_l2(rq, dq) < 1e-4 and relative_l2(rk, dk) < 1e-4 and relative_l2(rv, dv) < 1e-4
    chunks = ring.shard_chunks(T, world, sharding)[0]
    one = ring.simulate([ring.rank_backward(kernel, [(a, q[:, :, a:b]) for a, b in chunks],
                                            [(a, k[:, :, a:b], v[:, :, a:b]) for a, b in chunks],
                                            [out[:, :, a:b] for a, b in chunks],
                                            [np.ascontiguousarray(lse[:, :, a:b]) for a, b in chunks],
                                            [dout[:, :, a:b] for a, b in chunks], 1, bind, None, ("rel_bias",))])
    assert relative_l2(one[0][2]["rel_bias"], want["rel_bias"]) > 0.05


def test_unbound_gradient_names_are_refused(rng):
    kernel, bind = kernel_and_bind("causal", rng)
    q, k, v = qkv(rng, B=1, Hq=2, Hkv=2, Tq=16, Tkv=16, D=8)
    out, lse = kernel.forward(q, k, v, return_lse=True)
    with pytest.raises(flexjit.ArgumentError, match="grads: 'table' is not bound; bind it to get its gradient"):
        ring.simulated_backward(kernel, q, k, v, out, lse, out, 2, grads=("table",))


def kept_by_brute_force(mask, edges):
    """Pairs kept per (query chunk, key chunk) by evaluating mask on the whole grid with numpy."""
    q = np.arange(edges[-1])[:, None]
    kv = np.arange(edges[-1])[None, :]
    keep = mask(q, kv)
    n = len(edges) - 1
    return np.array([[keep[edges[i]:edges[i + 1], edges[j]:edges[j + 1]].sum() for j in range(n)] for i in range(n)])


DOC_IDS = np.repeat(np.arange(4, dtype=np.int32), [5, 17, 3, 23])


@pytest.mark.parametrize("name,bind,mask", [
    ("causal", {}, lambda q, kv: q >= kv),
    ("sliding_window", {"window": 7}, lambda q, kv: (q >= kv) & (q - kv < 7)),
    ("document", {"doc_ids": DOC_IDS}, lambda q, kv: (DOC_IDS[q] == DOC_IDS[kv]) & (q >= kv)),
])
def test_kept_pairs_counts_what_the_mask_keeps(name, bind, mask, rng):
    kernel, _ = kernel_and_bind(name, rng)
    edges = [0, 5, 20, 21, 40, 48]
    want = kept_by_brute_force(mask, edges)
    assert np.array_equal(np.array(kernel.kept_pairs(edges, bind=bind)), want)
    # Summed over batch entries and heads (this mask reads neither).
    assert np.array_equal(np.array(kernel.kept_pairs(edges, B=2, H=3, bind=bind)), 6 * want)
    # On a sample (each chunk's midpoints stand for it): close, not exact.
    sampled = np.array(kernel.kept_pairs(edges, bind=bind, budget=1600))
    assert abs(sampled.sum() - want.sum()) < 0.2 * want.sum()


def test_a_program_without_a_mask_keeps_every_pair():
    kernel = flexjit.compile("def score_mod(score, b, h, q_idx, kv_idx):\n    return score\n", 8, "float32", "cpu")
    assert kernel.kept_pairs([0, 3, 10]) == [[9.0, 21.0], [21.0, 49.0]]


def work_per_rank(chunks, mask, T):
    keep = mask(np.arange(T)[:, None], np.arange(T)[None, :])
    return [sum(int(keep[a:b].sum()) for a, b in rank) for rank in chunks]


@pytest.mark.parametrize("world", [2, 4])
def test_balanced_chunks_even_out_what_zigzag_does_not(world, rng):
    """Prefix LM with a prefix of half the sequence: zigzag leaves the ranks' work uneven; the
    balanced chunks are within 15% of each other, and the ring over them is still one call."""
    kernel, _ = kernel_and_bind("prefix_lm", rng)
    Tl = 96
    bind = {"prefix_len": np.array([48], np.int32)}
    mask = lambda q, kv: (kv < 48) | (q >= kv)  # noqa: E731
    zigzag = work_per_rank(ring.shard_chunks(Tl, world, "zigzag"), mask, Tl)
    chunks = ring.balanced_chunks(kernel, Tl, world, bind)
    balanced = work_per_rank(chunks, mask, Tl)
    assert [len(c) for c in chunks] == [4] * world
    assert max(balanced) / min(balanced) < 1.15 < max(zigzag) / min(zigzag)
    q, k, v = qkv(rng, B=1, Hq=2, Hkv=2, Tq=Tl, Tkv=Tl, D=8)
    whole, whole_lse = kernel.forward(q, k, v, bind, return_lse=True)
    out, lse = ring.simulated_attention(kernel, q, k, v, world, chunks, bind)
    assert relative_l2(out, whole) < 1e-5 and np.abs(lse - whole_lse).max() < 1e-4
    dout = rng.uniform(-1, 1, whole.shape).astype(np.float32)
    dq, dk, dv = kernel.backward(q, k, v, whole, whole_lse, dout, bind)
    rq, rk, rv = ring.simulated_backward(kernel, q, k, v, out, lse, dout, world, chunks, bind)
    assert relative_l2(rq, dq) < 1e-4 and relative_l2(rk, dk) < 1e-4 and relative_l2(rv, dv) < 1e-4


def test_bad_chunks_and_bounds_are_named(rng):
    kernel, _ = kernel_and_bind("causal", rng)
    with pytest.raises(flexjit.ArgumentError, match=r"sharding: chunks for 1 ranks, expected 2"):
        ring.shard_chunks(8, 2, [[(0, 8)]])
    with pytest.raises(flexjit.ArgumentError, match=r"sharding: positions 4..5 are in no chunk"):
        ring.shard_chunks(8, 2, [[(0, 4)], [(6, 8)]])
    with pytest.raises(flexjit.ArgumentError,
                       match=r"sharding: the chunk \[2, 6\) overlaps the one before it \(to 4\)"):
        ring.shard_chunks(8, 2, [[(0, 4)], [(2, 6), (6, 8)]])
    with pytest.raises(flexjit.ArgumentError, match=r"sharding: positions 6..7 are in no chunk"):
        ring.shard_chunks(8, 2, [[(0, 4)], [(4, 6)]])
    with pytest.raises(flexjit.ArgumentError, match=r"sharding: the chunk \[4, 4\) holds no position"):
        ring.shard_chunks(8, 2, [[(0, 4), (4, 4)], [(4, 8)]])
    with pytest.raises(flexjit.ArgumentError, match=r"cannot be cut into 16 chunks \(4 for each of 4 ranks\)"):
        ring.balanced_chunks(kernel, 10, 4)
    with pytest.raises(flexjit.ArgumentError, match=r"bounds: edge 2 \(3\) is not after edge 1 \(5\)"):
        kernel.kept_pairs([0, 5, 3])
    with pytest.raises(flexjit.ArgumentError, match=r"bounds: expected chunk edges 0 = e_0"):
        kernel.kept_pairs([1, 5])
    document, _ = kernel_and_bind("document", rng)
    with pytest.raises(flexjit.ArgumentError, match=r"mask_mod at b=0, h=0, q_idx=\d+, kv_idx=\d+: .*index"):
        document.kept_pairs([0, 8, 16], bind={"doc_ids": DOC_IDS[:10]})
