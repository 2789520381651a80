"""flexjit.torch.context_parallel_attention with real processes: 2 and 4 ranks joined by gloo on the
host (cpu kernels, float32 torch tensors), each holding its zigzag or contiguous share of one
sequence; and, on a host with 2, 4 or 8 GPUs, one rank a GPU joined by NCCL (bf16). Every rank's out, lse and gradients equal its rows of one call over the whole sequence,
for a causal mask, a sliding window and documents that span the shard boundaries; a captured bias
table's gradient shares sum over the ranks to one call's. Skipped where
torch is missing (CI); the GPU host runs it (scripts/gpu-test)."""

import socket

import pytest

torch = pytest.importorskip("torch")
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

import flexjit  # noqa: E402
import flexjit.torch as fj  # noqa: E402

B, H, D, T = 1, 2, 16, 48
DOCS = torch.repeat_interleave(torch.arange(4, dtype=torch.int32), torch.tensor([5, 17, 3, 23]))


def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def window(b, h, q_idx, kv_idx):
    return (q_idx >= kv_idx) & (q_idx - kv_idx < 7)


def documents(b, h, q_idx, kv_idx):
    return (DOCS[q_idx] == DOCS[kv_idx]) & (q_idx >= kv_idx)


MASKS = {"causal": causal, "window": window, "documents": documents}


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _whole():
    gen = torch.Generator().manual_seed(7)
    q, k, v = (torch.randn(B, H, T, D, generator=gen) for _ in range(3))
    dout = torch.randn(B, H, T, D, generator=gen)
    return q, k, v, dout


def _rank(rank, world, port, mask_name, sharding):
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    try:
        mask = MASKS[mask_name]
        q, k, v, dout = _whole()
        # The reference: one call over the whole sequence, on every rank.
        out, lse = flexjit.attention(q, k, v, mask_mod=mask, return_lse=True)
        dq, dk, dv = flexjit.attention_backward(q, k, v, out, lse, dout, mask_mod=mask)
        local = [fj.shard_sequence(x, sharding=sharding).clone().requires_grad_() for x in (q, k, v)]
        got, got_lse = fj.context_parallel_attention(*local, mask_mod=mask, sharding=sharding, return_lse=True)
        got.backward(fj.shard_sequence(dout, sharding=sharding))
        want = [fj.shard_sequence(x, sharding=sharding) for x in (out, lse, dq, dk, dv)]
        for name, g, w in zip(("out", "lse", "dq", "dk", "dv"), (got.detach(), got_lse, *[x.grad for x in local]), want):
            err = (g - w).norm() / (w.norm() + 1e-12)
            assert err < 1e-4, f"rank {rank} {name}: relative error {err:.2e}"
    finally:
        dist.destroy_process_group()


@pytest.mark.parametrize("mask_name", sorted(MASKS))
@pytest.mark.parametrize("world,sharding", [(2, "zigzag"), (4, "zigzag"), (4, "contiguous")])
def test_every_rank_gets_its_rows_of_one_call(world, sharding, mask_name):
    # A rank that fails raises here with its traceback.
    mp.start_processes(_rank, args=(world, _free_port(), mask_name, sharding), nprocs=world, start_method="fork")


def _nccl_rank(rank, world, port, mask_name):
    """One GPU a rank, NCCL between them, bf16 shards of a longer sequence: out, lse and the
    gradients equal this rank's rows of one call on its own GPU."""
    global LONG_DOCS
    torch.cuda.set_device(rank)
    # Documents of 100, 333, 91, 400 and 100 positions: most shard boundaries fall inside one.
    LONG_DOCS = torch.repeat_interleave(torch.arange(5, dtype=torch.int32),
                                        torch.tensor([100, 333, 91, 400, 100])).cuda()
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    try:
        gen = torch.Generator(device="cuda").manual_seed(3)
        q, k, v, dout = (torch.randn(1, 4, 1024, 64, generator=gen, device="cuda").to(torch.bfloat16) for _ in range(4))
        mask = {"causal": causal, "window": lambda b, h, q_idx, kv_idx: (q_idx >= kv_idx) & (q_idx - kv_idx < 300),
                "documents": _long_documents}[mask_name]
        out, lse = flexjit.attention(q, k, v, mask_mod=mask, return_lse=True)
        dq, dk, dv = flexjit.attention_backward(q, k, v, out, lse, dout, mask_mod=mask)
        local = [fj.shard_sequence(x).clone().requires_grad_() for x in (q, k, v)]
        got, got_lse = fj.context_parallel_attention(*local, mask_mod=mask, return_lse=True)
        got.backward(fj.shard_sequence(dout))
        want = [fj.shard_sequence(x) for x in (out, lse, dq, dk, dv)]
        for name, g, w in zip(("out", "lse", "dq", "dk", "dv"), (got.detach(), got_lse, *[x.grad for x in local]), want):
            err = ((g.float() - w.float()).norm() / (w.float().norm() + 1e-12)).item()
            assert err < 2e-2, f"rank {rank} {name}: relative error {err:.2e}"
    finally:
        dist.destroy_process_group()


LONG_DOCS = None  # set in each NCCL rank's process (on its GPU)


def _long_documents(b, h, q_idx, kv_idx):
    return (LONG_DOCS[q_idx] == LONG_DOCS[kv_idx]) & (q_idx >= kv_idx)


@pytest.mark.parametrize("mask_name", ["causal", "documents", "window"])
@pytest.mark.parametrize("world", [2, 4, 8])
def test_nccl_ranks_on_gpus_get_their_rows_of_one_call(world, mask_name):
    """The real ring: one process a GPU, NCCL. Runs where the host has `world` GPUs."""
    if not torch.cuda.is_available() or torch.cuda.device_count() < world or not dist.is_nccl_available():
        pytest.skip(f"needs {world} CUDA devices and NCCL")
    mp.start_processes(_nccl_rank, args=(world, _free_port(), mask_name), nprocs=world, start_method="spawn")


def _biased(table):
    def score_mod(score, b, h, q_idx, kv_idx):
        return score + table[h, kv_idx - q_idx + T]

    return score_mod


def _bias_rank(rank, world, port, sharding):
    """A relative-position bias table that requires grad: each rank's share of its gradient,
    summed over the group, is one call's gradient."""
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    try:
        q, k, v, dout = _whole()
        table = torch.randn(H, 2 * T + 1, generator=torch.Generator().manual_seed(11))
        out, lse = flexjit.attention(q, k, v, score_mod=_biased(table), mask_mod=causal, return_lse=True)
        *_, want = flexjit.attention_backward(q, k, v, out, lse, dout, score_mod=_biased(table), mask_mod=causal,
                                              capture_grads=True)
        param = table.clone().requires_grad_()
        local = [fj.shard_sequence(x, sharding=sharding) for x in (q, k, v)]
        got = fj.context_parallel_attention(*local, score_mod=_biased(param), mask_mod=causal, sharding=sharding)
        got.backward(fj.shard_sequence(dout, sharding=sharding))
        share = param.grad.clone()
        dist.all_reduce(param.grad)
        (whole,) = want.values()
        err = (param.grad - whole).norm() / whole.norm()
        assert err < 1e-4, f"rank {rank} table gradient: relative error {err:.2e}"
        assert (share - whole).norm() / whole.norm() > 0.05, f"rank {rank} holds the whole gradient, not its share"
    finally:
        dist.destroy_process_group()


@pytest.mark.parametrize("world,sharding", [(2, "zigzag"), (4, "contiguous")])
def test_captured_tensor_gradients_are_shares_that_sum_to_one_call(world, sharding):
    mp.start_processes(_bias_rank, args=(world, _free_port(), sharding), nprocs=world, start_method="fork")


def _prefix_lm(b, h, q_idx, kv_idx):
    return (kv_idx < T // 2) | (q_idx >= kv_idx)


def _balanced_rank(rank, world, port):
    """Chunks dealt by flexjit.torch.balanced_sharding: the same on every rank, and each rank's
    rows are still those of one call."""
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    try:
        q, k, v, dout = _whole()
        sharding = fj.balanced_sharding(q, k, v, mask_mod=_prefix_lm, pieces_per_rank=2)
        gathered = [None] * world
        dist.all_gather_object(gathered, sharding)
        assert all(g == sharding for g in gathered)
        out, lse = flexjit.attention(q, k, v, mask_mod=_prefix_lm, return_lse=True)
        local = [fj.shard_sequence(x, sharding=sharding) for x in (q, k, v)]
        got = fj.context_parallel_attention(*local, mask_mod=_prefix_lm, sharding=sharding)
        want = fj.shard_sequence(out, sharding=sharding)
        assert (got - want).norm() / want.norm() < 1e-4
    finally:
        dist.destroy_process_group()


def test_balanced_sharding_gives_every_rank_its_rows_of_one_call():
    mp.start_processes(_balanced_rank, args=(2, _free_port()), nprocs=2, start_method="fork")


def test_lengths_that_do_not_cut_into_equal_chunks_are_refused():
    port = _free_port()
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=0, world_size=1)
    try:
        q = torch.randn(1, 2, 7, 16)
        with pytest.raises(flexjit.ArgumentError, match="does not cut into 2 equal zigzag chunks"):
            fj.context_parallel_attention(q, q, q, mask_mod=causal)
        out = fj.context_parallel_attention(q, q, q, mask_mod=causal, sharding="contiguous")
        assert torch.allclose(out, flexjit.attention(q, q, q, mask_mod=causal), atol=1e-6)
    finally:
        dist.destroy_process_group()
