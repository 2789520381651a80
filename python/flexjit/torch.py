"""flexjit.torch.flex_attention: PyTorch FlexAttention's flex_attention, computed by flexjit's kernels.

    from flexjit.torch import flex_attention   # instead of torch.nn.attention.flex_attention's

The mods are the user's Python functions (score_mod, and block_mask.mask_mod of a BlockMask the
user made with create_block_mask: flexjit reads its mask_mod and analyses it itself, never its
block tensors). The call is a torch custom op with a registered fake and autograd formula, so
gradients reach q, k, v and every captured float tensor that requires them. An eager call
(`_eager_without_op`, on) that wants gradients runs through a torch.autograd.Function instead and
one that does not calls the kernel directly (a custom op's dispatch costs more than a short
launch: 152 us a call against 31 us, bench/NOTES.md); traced calls keep the custom op.

Under torch.compile the mods are translated and compiled once, at trace time, as a constant of the
graph (`_traced_plan`); the values they read are then read by plain closure, global, attribute and
item reads that the tracer follows (`_mods.follow`), so captured tensors become graph inputs and
new values of the same kinds reuse the kernel, with no graph break."""

import threading
import warnings
from typing import List, Tuple

import torch
from torch.nn.attention.flex_attention import noop_mask as _noop_mask

from . import _arrays, _attention, _mods
from ._context_parallel import balanced_sharding, context_parallel_attention, shard_sequence
from .errors import ArgumentError, CompileError, UnsupportedError

# Set to True to have calls flexjit cannot compile run on PyTorch's flex_attention instead (a
# warning says so once per reason); False raises the error.
fallback = False

_calls_lock = threading.Lock()
_calls = {}       # call id -> (Kernel, layout of the bound values)
_call_ids = {}    # (Kernel, layout) -> call id
_warned = set()

# Eager calls without the custom op (direct, or through _EagerAttention); off, the custom op
# serves every call.
_eager_without_op = True


def _register(kernel, layout):
    with _calls_lock:
        key = (id(kernel), layout)
        call = _call_ids.get(key)
        if call is None:
            call = len(_calls)
            _calls[call] = (kernel, layout)
            _call_ids[key] = call
        return call


def _split(bind):
    """The bound values as the op's schema carries them: tensors, ints (bools too) and floats, and
    the layout that puts them back together by name."""
    layout, tensors, ints, floats = [], [], [], []
    for name, value in bind.items():
        if torch.is_tensor(value):
            layout.append((name, "tensor"))
            tensors.append(value)
        elif isinstance(value, bool):
            layout.append((name, "bool"))
            ints.append(int(value))
        elif isinstance(value, int):
            layout.append((name, "int"))
            ints.append(value)
        else:
            layout.append((name, "float"))
            floats.append(float(value))
    # Never empty: torch's autograd wrapper takes an empty list for a list of tensors and then wants
    # a list back as its gradient. The layout reads only its own entries.
    return tuple(layout), tensors, ints + [0], floats + [0.0]


def _joined(layout, tensors, ints, floats):
    bind, t, i, f = {}, iter(tensors), iter(ints), iter(floats)
    for name, kind in layout:
        bind[name] = next(t) if kind == "tensor" else bool(next(i)) if kind == "bool" else next(i) if kind == "int" \
            else next(f)
    return bind


def _forward_values(kernel, layout, q, k, v, captures, ints, floats, scale):
    """(out, lse) of one forward call: the kernel with the bound values put back together."""
    bind = _joined(layout, captures, ints, floats)
    return kernel.forward(q, k, v, bind=bind, scale=scale, return_lse=True)


def _backward_values(kernel, layout, q, k, v, out, lse, dout, captures, ints, floats, scale, capture_grads):
    """[dq, dk, dv, then the gradient of each capture whose capture_grads entry is true]."""
    bind = _joined(layout, captures, ints, floats)
    names = [name for name, kind in layout if kind == "tensor"]
    wanted = tuple(n for n, want in zip(names, capture_grads) if want)
    # torch.use_deterministic_algorithms(True) asks for reproducible gradients: dQ in a fixed order.
    result = kernel.backward(q, k, v, out, lse, dout.contiguous(), bind=bind, scale=scale, grads=wanted,
                             deterministic=torch.are_deterministic_algorithms_enabled())
    grads = result[3] if wanted else {}
    return [result[0], result[1], result[2]] + [grads[n].to(bind[n].dtype) for n in wanted]


def _per_capture(grads, capture_grads):
    """The captures' gradients as autograd wants them: one per capture, None where none is wanted."""
    given = iter(grads)
    return [next(given) if want else None for want in capture_grads]


class _EagerAttention(torch.autograd.Function):
    """The eager call's autograd: a plain Function, whose dispatch costs a fraction of a custom
    op's (the custom op below is what torch.compile traces)."""

    @staticmethod
    def forward(ctx, kernel, layout, q, k, v, ints, floats, scale, *captures):
        out, lse = _forward_values(kernel, layout, q, k, v, captures, ints, floats, scale)
        ctx.save_for_backward(q, k, v, out, lse, *captures)
        ctx.kernel, ctx.layout, ctx.ints, ctx.floats, ctx.scale = kernel, layout, ints, floats, scale
        ctx.capture_grads = [c.requires_grad and c.is_floating_point() for c in captures]
        return out, lse

    @staticmethod
    def backward(ctx, dout, dlse):
        q, k, v, out, lse, *captures = ctx.saved_tensors
        grads = _backward_values(ctx.kernel, ctx.layout, q, k, v, out, lse, dout, captures, ctx.ints, ctx.floats,
                                 ctx.scale, ctx.capture_grads)
        return (None, None, grads[0], grads[1], grads[2], None, None, None,
                *_per_capture(grads[3:], ctx.capture_grads))


@torch.library.custom_op("flexjit::attention", mutates_args=())
def _attention_op(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, captures: List[torch.Tensor], call: int,
                  ints: List[int], floats: List[float], scale: float) -> Tuple[torch.Tensor, torch.Tensor]:
    kernel, layout = _calls[call]
    return _forward_values(kernel, layout, q, k, v, captures, ints, floats, scale)


@_attention_op.register_fake
def _attention_fake(q, k, v, captures, call, ints, floats, scale):
    out = q.new_empty((q.shape[0], q.shape[1], q.shape[2], v.shape[-1]))
    lse = q.new_empty((q.shape[0], q.shape[1], q.shape[2]), dtype=torch.float32)
    return out, lse


@torch.library.custom_op("flexjit::attention_backward", mutates_args=())
def _attention_backward_op(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, out: torch.Tensor, lse: torch.Tensor,
                           dout: torch.Tensor, captures: List[torch.Tensor], call: int, ints: List[int],
                           floats: List[float], scale: float, capture_grads: List[bool]) -> List[torch.Tensor]:
    kernel, layout = _calls[call]
    return _backward_values(kernel, layout, q, k, v, out, lse, dout, captures, ints, floats, scale, capture_grads)


@_attention_backward_op.register_fake
def _attention_backward_fake(q, k, v, out, lse, dout, captures, call, ints, floats, scale, capture_grads):
    # Row-major, as the kernels allocate them (not empty_like: q may be a strided view).
    wanted = [c for c, want in zip(captures, capture_grads) if want]
    return [x.new_empty(x.shape) for x in (q, k, v, *wanted)]


def _setup_context(ctx, inputs, output):
    q, k, v, captures, call, ints, floats, scale = inputs
    out, lse = output
    ctx.save_for_backward(q, k, v, out, lse, *captures)
    ctx.call, ctx.ints, ctx.floats, ctx.scale = call, ints, floats, scale
    ctx.capture_grads = [c.requires_grad and c.is_floating_point() for c in captures]


def _backward(ctx, dout, dlse):
    q, k, v, out, lse, *captures = ctx.saved_tensors
    grads = _attention_backward_op(q, k, v, out, lse, dout, captures, ctx.call, ctx.ints, ctx.floats, ctx.scale,
                                   ctx.capture_grads)
    return grads[0], grads[1], grads[2], _per_capture(grads[3:], ctx.capture_grads), None, None, None, None


_attention_op.register_autograd(_backward, setup_context=_setup_context)


def _warn_fall_back(reason):
    if not fallback:
        raise reason
    key = str(reason).splitlines()[0]
    if key not in _warned:
        _warned.add(key)
        warnings.warn(f"flexjit: running PyTorch's flex_attention instead: {key}", stacklevel=3)


def _selects_blocks(block_mask, Tkv):
    """Whether a BlockMask leaves out some key block of some query block: then its tensors, not its
    mask_mod, say what is attended. Read on the host (one synchronization), only for noop masks."""
    kv_block = block_mask.BLOCK_SIZE[1] if isinstance(block_mask.BLOCK_SIZE, tuple) else block_mask.BLOCK_SIZE
    listed = block_mask.kv_num_blocks
    if getattr(block_mask, "full_kv_num_blocks", None) is not None:
        listed = listed + block_mask.full_kv_num_blocks
    return bool((listed < -(-Tkv // kv_block)).any())


def _torch_flex_attention(args, kwargs):
    from torch.nn.attention.flex_attention import flex_attention as torch_flex_attention

    return torch_flex_attention(*args, **kwargs)


@torch._dynamo.assume_constant_result
def _traced_plan(score_mod, mask_mod, dtype, device, head_dim, head_dim_v, kernel_options):
    """What a traced call runs, computed once when torch.compile traces it and kept in the graph as
    a constant: (call id, layout of the bound values, their routes), or ("fall back",) where the
    mods cannot be compiled and `fallback` is on. Only the values' kinds enter it; the values are
    read by the traced code (`_traced_values`)."""
    try:
        translation, bind = _mods.translate(score_mod=score_mod, mask_mod=mask_mod)
        dtype_name = _arrays.torch_dtype_name(dtype)
        if dtype_name not in ("bf16", "fp16", "f32"):
            raise ArgumentError(f"q has elements of type {dtype}; use bfloat16, float16 or float32")
        kernel = _attention.kernel_for(translation, dtype_name, device, head_dim, head_dim_v, kernel_options)
    except (CompileError, UnsupportedError) as e:
        _warn_fall_back(e)
        return ("fall back",)
    layout = _split(bind)[0]
    return _register(kernel, layout), layout, translation.routes


def _traced_values(layout, routes, entries):
    """The bound values as _split gives them, read along their routes by code the tracer follows."""
    tensors, ints, floats = [], [], []
    for (_, kind), route in zip(layout, routes):
        value = _mods.follow(entries, route)
        if kind == "tensor":
            tensors.append(value)
        elif kind == "float":
            floats.append(value)
        else:  # an int stays as traced (a symbolic int, once it varies, must not be pinned by int())
            ints.append(int(value) if kind == "bool" else value)
    return tensors, ints + [0], floats + [0.0]


def flex_attention(query, key, value, score_mod=None, block_mask=None, scale=None, enable_gqa=False,
                   return_lse=False, kernel_options=None, *, return_aux=None):
    """torch.nn.attention.flex_attention.flex_attention, run by flexjit: query [B, Hq, Tq, D], key
    and value [B, Hkv, Tkv, D] (bf16 or fp16 on a CUDA device; any dtype flexjit's cpu kernels take
    on the host). Returns out, (out, lse) with return_lse, or (out, AuxOutput) with return_aux.
    float8_e4m3fn inputs are refused: FlexAttention has no descale factors (flexjit.attention takes
    them)."""
    if query.dtype == torch.float8_e4m3fn:
        raise ArgumentError("query is float8_e4m3fn: flex_attention takes no descale factors; call "
                            "flexjit.attention(q, k, v, ..., q_descale=, k_descale=, v_descale=) for FP8 inputs")
    args = (query, key, value, score_mod, block_mask, scale, enable_gqa, return_lse, kernel_options)
    fallback_kwargs = {"return_aux": return_aux} if return_aux is not None else {}
    mask_mod = getattr(block_mask, "mask_mod", None)
    _attention._check_heads(query, key, value, enable_gqa)
    q = query if query.stride(-1) == 1 else query.contiguous()
    k = key if key.stride(-1) == 1 else key.contiguous()
    v = value if value.stride(-1) == 1 else value.contiguous()
    scale = float(scale) if scale is not None else q.shape[-1] ** -0.5
    if torch.compiler.is_compiling():
        plan = _traced_plan(score_mod, mask_mod, query.dtype, query.device.type, query.shape[-1], value.shape[-1],
                            kernel_options)
        if len(plan) == 1:
            return _torch_flex_attention(args, fallback_kwargs)
        call, layout, routes = plan
        tensors, ints, floats = _traced_values(layout, routes, {"score_mod": score_mod, "mask_mod": mask_mod})
        out, lse = _attention_op(q, k, v, tensors, call, ints, floats, scale)
    else:
        if mask_mod is _noop_mask and block_mask is not None and _selects_blocks(block_mask, key.shape[2]):
            _warn_fall_back(UnsupportedError(
                "block_mask selects key blocks by its tensors alone (its mask_mod is noop_mask, as "
                "BlockMask.from_kv_blocks makes it without one), and flexjit reads a BlockMask's mask_mod only: "
                "write the selection as a mask_mod (over a captured tensor of block indices) or as a BlockIndices "
                "program"))
            return _torch_flex_attention(args, fallback_kwargs)
        try:
            kernel, bind = _attention.prepare(query, key, value, score_mod, mask_mod, None, kernel_options)
        except (CompileError, UnsupportedError) as e:
            _warn_fall_back(e)
            return _torch_flex_attention(args, fallback_kwargs)
        wants_grad = torch.is_grad_enabled() and (q.requires_grad or k.requires_grad or v.requires_grad or (
            bool(bind) and any(getattr(x, "requires_grad", False) for x in bind.values())))
        if _eager_without_op and not wants_grad:
            # The kernel directly, with the values as bound (no split for an op's schema).
            with_lse = return_lse or getattr(return_aux, "lse", False)
            result = kernel.forward(q, k, v, bind=bind, scale=scale, return_lse=with_lse)
            out, lse = result if with_lse else (result, None)
        else:
            layout, tensors, ints, floats = _split(bind)
            if wants_grad and kernel.device != "cpu":
                # Training: the backward kernels compile beside the forward's first run, not after it
                # (those for the captured tensors that will want gradients, in the mode the backward
                # will run in).
                names = [name for name, kind in layout if kind == "tensor"]
                wanted = tuple(n for n, t in zip(names, tensors) if t.requires_grad and t.is_floating_point())
                kernel.compile_backward_ahead(wanted, torch.are_deterministic_algorithms_enabled())
            if not _eager_without_op:
                out, lse = _attention_op(q, k, v, tensors, _register(kernel, layout), ints, floats, scale)
            else:
                out, lse = _EagerAttention.apply(kernel, layout, q, k, v, ints, floats, scale, *tensors)
    if return_aux is not None:
        from torch.nn.attention.flex_attention import AuxOutput

        if getattr(return_aux, "max_scores", False):
            raise UnsupportedError("return_aux: max_scores is not computed by flexjit; ask for lse only")
        return out, AuxOutput(lse=lse if getattr(return_aux, "lse", False) else None)
    return (out, lse) if return_lse else out


__all__ = ["flex_attention", "fallback", "context_parallel_attention", "shard_sequence", "balanced_sharding"]
