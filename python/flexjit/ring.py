"""Ring attention (context parallelism) for any flexjit program.

Each rank holds a shard of one sequence: some chunks of its queries and the same chunks of its
keys and values. The key/value shards travel round the ring; at every step a rank attends its
queries to the shard it holds, with the chunks' global positions (`q_offset`, `kv_offset`: the mods
see global `q_idx` and `kv_idx`, so captured tensors are indexed by global positions), and merges
the partial results by their lse (`flexjit.merge_attention`). The backward sends each shard's dk
and dv sums after it, so that they come home summed over every rank's queries; each step's
backward is given the merged out and lse, which makes the sum exact. The gradient of a captured
tensor (bound to the whole sequence's on every rank) is a sum over (query, key) pairs, each pair
one rank's: each rank returns its own queries' share, and the shares sum to the whole gradient. A
chunk pair that the mask provably keeps nothing of (`Kernel.may_keep_any`: under a causal mask, keys after every query)
costs no call, forward or backward. Programs with a sink are refused: every call would add it to
its lse once more.

The algorithm is written once, per rank, as a generator (`rank_forward`, `rank_backward`): what it
yields is sent to the next rank, and it is resumed with a receipt, a function of no arguments that
gives what the previous rank sent, waiting for it if it is still travelling. A generator yields a
shard as soon as it is final and calls the receipt only when it needs the next one, so that a
transport can move the shards while the step computes: the keys and values of a step travel under
its calls, and the backward's dk and dv, which the step's calls add to, travel after them.
`simulate` runs every rank in one process (virtual ranks); a transport over point-to-point
messages runs one rank per process with the same generators.

Sharding: `shard_chunks(T, world, "zigzag")` cuts the sequence into 2 * world chunks and gives rank
r chunks r and 2 * world - 1 - r, so that under a causal mask every rank has the same work;
"contiguous" gives rank r the r-th of world equal runs; `balanced_chunks(kernel, T, world, bind)`
deals smaller chunks by the pairs the mask keeps in each (documents, prefix LM: masks whose work
zigzag does not even out), and any function taking a sharding takes its result.
"""

from . import _arrays
from ._kernel import capture_gradient_arrays
from ._merge import merge_attention
from .errors import ArgumentError, UnsupportedError

SHARDINGS = ("zigzag", "contiguous")


def shard_chunks(T, world, sharding="zigzag"):
    """The [start, stop) chunks of positions 0..T-1 that each of `world` ranks holds. sharding:
    "zigzag", "contiguous", or the chunks themselves (as balanced_chunks gives them), checked."""
    _check_world(world)
    if isinstance(sharding, (list, tuple)):
        return _checked_chunks(T, world, sharding)
    if sharding not in SHARDINGS:
        raise ArgumentError(f"sharding: expected one of {', '.join(SHARDINGS)} or the chunks of each rank, got "
                            f"{sharding!r}")
    pieces = 2 * world if sharding == "zigzag" else world
    if T < pieces:
        raise ArgumentError(f"a sequence of {T} positions cannot be cut into {pieces} chunks for {world} ranks")
    bounds = _edges(T, pieces)
    chunk = [(bounds[i], bounds[i + 1]) for i in range(pieces)]
    if sharding == "contiguous":
        return [[chunk[r]] for r in range(world)]
    return [[chunk[r], chunk[pieces - 1 - r]] for r in range(world)]


def _check_world(world):
    if not (isinstance(world, int) and world >= 1):
        raise ArgumentError(f"world: expected a positive number of ranks, got {world!r}")


def _edges(T, pieces):
    """The edges of `pieces` chunks of 0..T-1 as equal as whole positions allow."""
    return [T * i // pieces for i in range(pieces + 1)]


def _checked_chunks(T, world, sharding):
    """sharding as a list of each rank's [(start, stop)], when it covers 0..T-1 once."""
    if len(sharding) != world:
        raise ArgumentError(f"sharding: chunks for {len(sharding)} ranks, expected {world}")
    chunks = [[(int(a), int(b)) for a, b in rank] for rank in sharding]
    at = 0
    for a, b in sorted(c for rank in chunks for c in rank):
        if b <= a:
            raise ArgumentError(f"sharding: the chunk [{a}, {b}) holds no position")
        if a < at:
            raise ArgumentError(f"sharding: the chunk [{a}, {b}) overlaps the one before it (to {at})")
        if a > at:
            raise ArgumentError(f"sharding: positions {at}..{a - 1} are in no chunk")
        at = b
    if at < T:
        raise ArgumentError(f"sharding: positions {at}..{T - 1} are in no chunk")
    if at > T:
        raise ArgumentError(f"sharding: the chunks run to {at}, past the sequence's {T} positions")
    return chunks


def balanced_chunks(kernel, T, world, bind=None, *, B=1, H=1, pieces_per_rank=4, budget=1 << 22):
    """Chunks of positions 0..T-1 for `world` ranks that even out the mask's work: T is cut into
    world * pieces_per_rank equal chunks, the work of each (as queries) is the pairs mask_mod keeps
    against every key (Kernel.kept_pairs, with bind's values over B batch entries and H heads), and
    the costliest chunks are dealt first, each to the rank with the least work that still has room
    for one, so that every rank holds pieces_per_rank chunks. The ring's steps are not balanced one
    by one, only each rank's total. Pass the result as `sharding`."""
    if not (isinstance(pieces_per_rank, int) and pieces_per_rank >= 1):
        raise ArgumentError(f"pieces_per_rank: expected a positive number, got {pieces_per_rank!r}")
    _check_world(world)
    pieces = world * pieces_per_rank
    if T < pieces:
        raise ArgumentError(f"a sequence of {T} positions cannot be cut into {pieces} chunks ({pieces_per_rank} for "
                            f"each of {world} ranks)")
    edges = _edges(T, pieces)
    work = [sum(row) for row in kernel.kept_pairs(edges, B, H, bind, budget=budget)]
    load, ranks = [0.0] * world, [[] for _ in range(world)]
    for i in sorted(range(pieces), key=lambda i: (-work[i], i)):
        r = min((r for r in range(world) if len(ranks[r]) < pieces_per_rank), key=lambda r: (load[r], r))
        load[r] += work[i]
        ranks[r].append((edges[i], edges[i + 1]))
    return [sorted(c) for c in ranks]


def _refuse_sink(kernel):
    if kernel.program.has_sink:
        raise UnsupportedError(f"ring attention of {kernel.program.name}: its sink would be counted once per key "
                               "shard in the merged lse; programs with a sink are not supported yet")


def _keeps_any(kernel, q_offset, q, kv_offset, k, bind):
    return kernel.may_keep_any(q.shape[2], k.shape[2], bind, q_offset=q_offset, kv_offset=kv_offset)


def rank_forward(kernel, q_chunks, kv_chunks, world, bind=None, scale=None):
    """One rank's forward: q_chunks [(offset, q)], kv_chunks [(offset, k, v)] (arrays [B, H, t, D]).
    Yields the key/value shard it holds to the next rank world - 1 times; returns [(out, lse)] per
    query chunk (out in q's dtype; rows that no key reaches: out 0, lse -inf)."""
    _refuse_sink(kernel)
    acc = [None] * len(q_chunks)  # running (out f32, lse) per query chunk
    held = kv_chunks
    for step in range(world):
        receive = (yield held) if step < world - 1 else None  # the shard moves on while this step reads it
        for i, (q_offset, q) in enumerate(q_chunks):
            for kv_offset, k, v in held:
                if not _keeps_any(kernel, q_offset, q, kv_offset, k, bind):
                    continue
                out, lse = kernel.forward(q, k, v, bind, scale, return_lse=True, q_offset=q_offset,
                                          kv_offset=kv_offset)
                if acc[i] is None:
                    acc[i] = (_arrays.cast(out, "f32"), lse)
                else:
                    merge_attention([acc[i], (out, lse)], out=acc[i][0], lse=acc[i][1])
        if receive is not None:
            held = receive()
    for i, (_, q) in enumerate(q_chunks):
        if acc[i] is None:  # no shard reached these queries
            B, H, t = q.shape[0], q.shape[1], q.shape[2]
            lse = _arrays.empty(q, (B, H, t), "f32")
            lse[...] = float("-inf")
            acc[i] = (_arrays.zeros(q, (B, H, t, held[0][2].shape[3]), "f32"), lse)
    return [(_arrays.cast(out, _arrays.dtype_name(q) or kernel.dtype), lse)
            for (_, q), (out, lse) in zip(q_chunks, acc)]


def rank_backward(kernel, q_chunks, kv_chunks, outs, lses, douts, world, bind=None, scale=None, grads=()):
    """One rank's backward, given its query chunks' merged out and lse (rank_forward's) and dout.
    The key/value shard travels, and after it the sums of its dk and dv (f32); after world shifts
    each shard's sums are home.
    Returns ([dq per query chunk], [(dk, dv) per key chunk]) in the inputs' dtypes; with grads (names
    of captured float tensors, bound to the whole sequence's), also {name: f32 gradient} of this
    rank's queries alone: every (query, key) pair is one rank's, so the ranks' gradients sum to the
    whole sequence's."""
    _refuse_sink(kernel)
    bind = bind or {}
    capture_grads = _zero_capture_grads(bind, grads)
    dq = [_arrays.zeros(q, tuple(q.shape), "f32") for _, q in q_chunks]
    held = kv_chunks
    sums = [(_arrays.zeros(k, tuple(k.shape), "f32"), _arrays.zeros(v, tuple(v.shape), "f32")) for _, k, v in kv_chunks]
    for step in range(world):
        # The keys and values move on under the step's calls (the last step's need not: only the
        # sums go home); the sums of dk and dv once the calls have added to them.
        receive_keys = (yield held) if step < world - 1 else None
        for i, (q_offset, q) in enumerate(q_chunks):
            for (kv_offset, k, v), (dk, dv) in zip(held, sums):
                if not _keeps_any(kernel, q_offset, q, kv_offset, k, bind):
                    continue
                result = kernel.backward(q, k, v, outs[i], lses[i], douts[i], bind, scale, grads, q_offset=q_offset,
                                         kv_offset=kv_offset)
                dqi, dki, dvi = result[:3]
                for name, g in (result[3] if grads else {}).items():
                    capture_grads[name] += g
                dq[i] += dqi
                dk += dki
                dv += dvi
        if world > 1:
            sums = (yield sums)()
        if receive_keys is not None:
            held = receive_keys()
    # After world shifts every shard's sums are home: this rank's own chunks'.
    result = ([_arrays.cast(x, _arrays.dtype_name(q)) for x, (_, q) in zip(dq, q_chunks)],
              [(_arrays.cast(dk, _arrays.dtype_name(k)), _arrays.cast(dv, _arrays.dtype_name(v)))
               for (_, k, v), (dk, dv) in zip(kv_chunks, sums)])
    return result + (capture_grads,) if grads else result


def _zero_capture_grads(bind, grads):
    """{name: f32 zeros shaped like the bound tensor} for each name in grads."""
    out = capture_gradient_arrays(bind, grads)
    for g in out.values():
        g[...] = 0
    return out


def _delivered(message):
    """A receipt for a message that has already arrived."""
    return lambda: message


def simulate(ranks):
    """Runs rank generators in one process, in lock step: what rank r yields, rank (r + 1) % world
    receives (its receipt gives it at once). Returns each rank's result."""
    world = len(ranks)
    results, done, sending = [None] * world, [False] * world, [None] * world
    for r, g in enumerate(ranks):
        try:
            sending[r] = next(g)
        except StopIteration as stop:
            results[r], done[r] = stop.value, True
    while not all(done):
        received = [sending[(r - 1) % world] for r in range(world)]
        for r, g in enumerate(ranks):
            if done[r]:
                continue
            try:
                sending[r] = g.send(_delivered(received[r]))
            except StopIteration as stop:
                results[r], done[r] = stop.value, True
    return results


def _rows(x, chunks):
    return [(a, x[:, :, a:b]) for a, b in chunks]


def _kv_rows(k, v, chunks):
    return [(a, k[:, :, a:b], v[:, :, a:b]) for a, b in chunks]


def _check_sequence(q, k):
    if q.shape[2] != k.shape[2]:
        raise ArgumentError(f"ring attention shards one sequence: q has {q.shape[2]} positions and k {k.shape[2]}")


def simulated_attention(kernel, q, k, v, world, sharding="zigzag", bind=None, scale=None):
    """(out, lse) of the whole sequence, computed by `world` virtual ranks round a ring (the
    sequence sharded by `sharding`, each chunk pair one kernel call)."""
    _check_sequence(q, k)
    chunks = shard_chunks(q.shape[2], world, sharding)
    ranks = [rank_forward(kernel, _rows(q, c), _kv_rows(k, v, c), world, bind, scale)
             for c in chunks]
    out = _arrays.empty(q, tuple(q.shape[:3]) + (v.shape[3],), _arrays.dtype_name(q) or kernel.dtype)
    lse = _arrays.empty(q, tuple(q.shape[:3]), "f32")
    for c, parts in zip(chunks, simulate(ranks)):
        for (a, b), (o, l) in zip(c, parts):
            out[:, :, a:b] = o
            lse[:, :, a:b] = l
    return out, lse


def simulated_backward(kernel, q, k, v, out, lse, dout, world, sharding="zigzag", bind=None, scale=None, grads=()):
    """(dq, dk, dv) of the whole sequence by `world` virtual ranks, given the whole out and lse; with
    grads, (dq, dk, dv, {name: gradient}), each captured tensor's gradient summed over the ranks."""
    _check_sequence(q, k)
    chunks = shard_chunks(q.shape[2], world, sharding)
    ranks = [rank_backward(kernel, _rows(q, c), _kv_rows(k, v, c),
                           [out[:, :, a:b] for a, b in c], [_arrays.contiguous(lse[:, :, a:b]) for a, b in c],
                           [dout[:, :, a:b] for a, b in c], world, bind, scale, grads) for c in chunks]
    dq = _arrays.empty(q, tuple(q.shape), _arrays.dtype_name(q))
    dk = _arrays.empty(k, tuple(k.shape), _arrays.dtype_name(k))
    dv = _arrays.empty(v, tuple(v.shape), _arrays.dtype_name(v))
    capture_grads = _zero_capture_grads(bind or {}, grads)
    for c, result in zip(chunks, simulate(ranks)):
        for (a, b), x, (y, z) in zip(c, result[0], result[1]):
            dq[:, :, a:b] = x
            dk[:, :, a:b] = y
            dv[:, :, a:b] = z
        for name, g in (result[2] if grads else {}).items():
            capture_grads[name] += g
    return (dq, dk, dv, capture_grads) if grads else (dq, dk, dv)
