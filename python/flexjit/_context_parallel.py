"""flexjit.torch.context_parallel_attention: flexjit.ring run with one process per rank, the key/value
shards passed round the ring by torch.distributed point-to-point messages (NCCL for CUDA tensors,
gloo for host ones). Each rank holds its chunks of the sequence (`shard_sequence`), concatenated;
the ring's generators (flexjit.ring.rank_forward, rank_backward) do the attention, and this module
drives them: what a rank's generator yields starts on its way to the next rank, and the generator
is resumed with a receipt for what the previous rank sends, which it reads after the step's calls,
so that the messages travel while the step computes. Autograd runs the backward ring, the sums of
dK and dV travelling home after their shard."""

import torch
import torch.distributed as dist

from . import _attention, ring
from .errors import ArgumentError


def _ranks(group):
    return dist.get_rank(group), dist.get_world_size(group)


def _global_rank(group, rank):
    return rank if group is None else dist.get_global_rank(group, rank)


def shard_sequence(x, group=None, sharding="zigzag", dim=2):
    """This rank's share of a whole sequence x (positions along `dim`): its chunks under `sharding`
    (flexjit.ring.shard_chunks), concatenated, as context_parallel_attention takes them."""
    rank, world = _ranks(group)
    chunks = ring.shard_chunks(x.shape[dim], world, sharding)[rank]
    return torch.cat([x.narrow(dim, a, b - a) for a, b in chunks], dim=dim)


def balanced_sharding(query, key, value, group=None, score_mod=None, mask_mod=None, pieces_per_rank=4,
                      kernel_options=None):
    """Each rank's chunks of the whole sequence (query, key, value: [B, H, T, D], before sharding)
    that even out the mask's work over the ranks of `group` (flexjit.ring.balanced_chunks, with
    the mods' captured values): pass it as `sharding` to shard_sequence and
    context_parallel_attention. T must divide into world * pieces_per_rank equal chunks."""
    world = _ranks(group)[1]
    kernel, bind = _attention.prepare(query, key, value, score_mod, mask_mod, None, kernel_options)
    return ring.balanced_chunks(kernel, query.shape[2], world, bind, B=query.shape[0], H=query.shape[1],
                                pieces_per_rank=pieces_per_rank)


def _pieces(x, chunks):
    """[(global offset, view)] of a rank's concatenated chunks of x (positions along dim 2)."""
    out, at = [], 0
    for a, b in chunks:
        out.append((a, x[:, :, at:at + b - a]))
        at += b - a
    return out


def _kv_pieces(k, v, chunks):
    """[(global offset, k view, v view)] of a rank's key/value chunks, as the ring holds them."""
    return [(a, kk, vv) for (a, kk), (_, vv) in zip(_pieces(k, chunks), _pieces(v, chunks))]


def _post(payload, send_to, recv_from, group):
    """Starts sending payload (a list of tuples of ints and tensors) to rank send_to and receiving
    rank recv_from's, which has the same pattern and shapes (every rank holds chunks of one size);
    returns the receipt: a function that waits for it and gives it. Ring steps compute between the
    two (NCCL moves the tensors on its own stream meanwhile)."""
    ops, received = [], []
    for item in payload:
        tensors = [x.contiguous() for x in item if torch.is_tensor(x)]
        numbers = [x for x in item if not torch.is_tensor(x)]
        ints = [torch.tensor(numbers, dtype=torch.int64, device=tensors[0].device)] if numbers else []
        buffers = [torch.empty_like(t) for t in ints + tensors]
        ops += [dist.P2POp(dist.isend, t, send_to, group) for t in ints + tensors]
        ops += [dist.P2POp(dist.irecv, b, recv_from, group) for b in buffers]
        received.append((item, buffers, bool(numbers)))
    requests = dist.batch_isend_irecv(ops)

    def receive():
        for request in requests:
            request.wait()
        ops.clear()  # the sent tensors were kept alive until here
        out = []
        for item, buffers, has_ints in received:
            ints = iter(buffers[0].tolist() if has_ints else ())
            tensors = iter(buffers[1:] if has_ints else buffers)
            out.append(tuple(next(tensors) if torch.is_tensor(x) else next(ints) for x in item))
        return out

    return receive


def _drive(generator, group):
    """Runs one rank's ring generator against its neighbours; returns what it returns."""
    rank, world = _ranks(group)
    send_to, recv_from = _global_rank(group, (rank + 1) % world), _global_rank(group, (rank - 1) % world)
    try:
        sending = next(generator)
        while True:
            sending = generator.send(_post(sending, send_to, recv_from, group))
    except StopIteration as stop:
        return stop.value


class _RingAttention(torch.autograd.Function):
    """captures: the bound float tensors that want gradients (names: their names in bind), inputs
    of the Function so that autograd hands them their gradients."""

    @staticmethod
    def forward(ctx, q, k, v, kernel, bind, scale, group, chunks, names, *captures):
        world = _ranks(group)[1]
        parts = _drive(ring.rank_forward(kernel, _pieces(q, chunks), _kv_pieces(k, v, chunks), world, bind, scale),
                       group)
        out = torch.cat([o for o, _ in parts], dim=2)
        lse = torch.cat([l for _, l in parts], dim=2)
        ctx.save_for_backward(q, k, v, out, lse)
        ctx.kernel, ctx.bind, ctx.scale, ctx.group, ctx.chunks, ctx.names = kernel, bind, scale, group, chunks, names
        ctx.mark_non_differentiable(lse)
        return out, lse

    @staticmethod
    def backward(ctx, dout, dlse):
        q, k, v, out, lse = ctx.saved_tensors
        chunks, world = ctx.chunks, _ranks(ctx.group)[1]
        kv = _kv_pieces(k, v, chunks)
        outs = [o for _, o in _pieces(out, chunks)]
        lses = [l.contiguous() for _, l in _pieces(lse, chunks)]
        douts = [d for _, d in _pieces(dout.contiguous(), chunks)]
        result = _drive(ring.rank_backward(ctx.kernel, _pieces(q, chunks), kv, outs, lses, douts, world, ctx.bind,
                                           ctx.scale, ctx.names), ctx.group)
        dq = torch.cat(result[0], dim=2)
        dk = torch.cat([g for g, _ in result[1]], dim=2)
        dv = torch.cat([g for _, g in result[1]], dim=2)
        # This rank's queries' share of each captured tensor's gradient (flexjit.ring.rank_backward).
        captures = [result[2][n].to(ctx.bind[n].dtype) for n in ctx.names]
        return (dq, dk, dv, None, None, None, None, None, None, *captures)


def context_parallel_attention(query, key, value, group=None, score_mod=None, mask_mod=None, sharding="zigzag",
                               scale=None, enable_gqa=False, return_lse=False, kernel_options=None):
    """FlexAttention's attention over a sequence sharded across the ranks of `group` (a
    torch.distributed process group; None: the default one). Each rank passes its own share of q,
    k and v, [B, H, T / world, D]: the chunks of positions `sharding` gives it ("zigzag": chunks r
    and 2 * world - 1 - r of 2 * world, which balances a causal mask; "contiguous": the r-th of
    world runs; or each rank's chunks, all of one length, as flexjit.ring.balanced_chunks deals
    them for masks whose work zigzag does not even out), concatenated, as
    shard_sequence(x, group, sharding) cuts them. The mods see global
    positions, so captured tensors are indexed by them (bind the whole sequence's). Returns this
    rank's rows of out (and lse with return_lse), in the same order; gradients reach q, k and v,
    and captured float tensors that require grad get this rank's queries' share of theirs (the
    ranks' shares sum to the whole: reduce them across the group as any parameter's gradient).
    The sequence length (world times the local one) must divide into the sharding's chunks."""
    _attention._check_heads(query, key, value, enable_gqa)
    rank, world = _ranks(group)
    local = query.shape[2]
    if key.shape[2] != local or value.shape[2] != local:
        raise ArgumentError(f"context_parallel_attention shards one sequence: q holds {local} positions, k "
                            f"{key.shape[2]} and v {value.shape[2]}")
    every = ring.shard_chunks(local * world, world, sharding)
    chunks = every[rank]
    lengths = {b - a for c in every for a, b in c}
    if sum(b - a for a, b in chunks) != local or len(lengths) != 1:
        if not isinstance(sharding, str):
            raise ArgumentError(f"sharding: the ring passes shards of one shape, so every chunk needs one length "
                                f"(got {sorted(lengths)}) and every rank {local} positions")
        pieces = 2 * world if sharding == "zigzag" else world
        raise ArgumentError(f"a sequence of {local * world} positions over {world} ranks does not cut into {pieces} "
                            f"equal {sharding} chunks: make each rank's length a multiple of {pieces // world}")
    kernel, bind = _attention.prepare(query, key, value, score_mod, mask_mod, None, kernel_options)
    names = tuple(name for name, x in bind.items() if torch.is_tensor(x) and x.requires_grad and x.is_floating_point())
    out, lse = _RingAttention.apply(query, key, value, kernel, bind, scale, group, chunks, names,
                                    *(bind[n] for n in names))
    return (out, lse) if return_lse else out
