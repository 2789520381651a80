"""flexjit.merge_attention: attention over disjoint key sets put together from each set's out and
lse (kv shards of context parallelism, a shared prefix and per-sequence suffixes)."""

from . import _arrays, _flexjit
from .errors import ArgumentError


def merge_attention(parts, *, out=None, lse=None):
    """(out, lse) of the attention over the union of the parts' keys, each part an (out_i, lse_i)
    pair as a forward call returns them (out_i [B, H, T, D] bf16, fp16 or f32; lse_i float32
    [B, H, T]): lse = log sum_i exp(lse_i), out = sum_i exp(lse_i - lse) out_i. out and lse are
    new arrays like the first part's unless given (a part's own may be given: merged in place).
    Host arrays, or CUDA arrays of one device (merged on the GPU, on torch's current stream). The
    backward needs no merge: each part's backward given the merged out and lse returns its keys'
    dk, dv and its share of dq."""
    parts = list(parts)
    if not parts:
        raise ArgumentError("merge_attention: no parts to merge")
    for i, part in enumerate(parts):
        if not (isinstance(part, (tuple, list)) and len(part) == 2):
            raise ArgumentError(f"merge_attention: parts[{i}] is not an (out, lse) pair")
        for name, x in zip(("out", "lse"), part):
            if not (_arrays.is_array(x) or hasattr(x, "__dlpack__")):
                raise ArgumentError(
                    f"merge_attention: parts[{i}].{name}: expected an array with __dlpack__, got {type(x).__name__}")
    first_out, first_lse = parts[0]
    if out is None:
        out = _arrays.empty(first_out, tuple(first_out.shape), _arrays.dtype_name(first_out) or "f32")
    if lse is None:
        lse = _arrays.empty(first_lse, tuple(first_lse.shape), "f32")
    _flexjit.merge_attention([_arrays.capsule(o) for o, _ in parts], [_arrays.capsule(l) for _, l in parts],
                             _arrays.capsule(out), _arrays.capsule(lse), _arrays.stream(out))
    return out, lse
