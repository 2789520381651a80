"""flexjit.attention and flexjit.attention_backward: FlexAttention's call, with the mods given as
Python functions, on numpy arrays (cpu kernels) or torch tensors. flexjit.torch builds the
autograd function and torch.compile support on these."""

import collections
import numbers
import threading

from . import _arrays, _flexjit, _kernel, _mods
from ._source_map import format_diagnostics
from .errors import ArgumentError, CompileError, Diagnostic

_KERNELS_KEPT = 256  # compiled kernels remembered by program text and options (least recently used go)
_kernels = collections.OrderedDict()
_kernels_lock = threading.Lock()


def _compiled(translation, head_dim, dtype, device, options):
    """The kernel for a translation and options: from the translation's own memo (no hashing of
    the text on the steady path), else from the memo by text, else compiled."""
    options_key = (head_dim, dtype, device, options)
    kernel = translation.kernels.get(options_key)
    if kernel is not None:
        return kernel
    key = (translation.text,) + options_key
    with _kernels_lock:
        kernel = _kernels.get(key)
        if kernel is not None:
            _kernels.move_to_end(key)
            translation.kernels[options_key] = kernel
            return kernel
    try:
        program = _flexjit.Program.from_source(translation.text, "<flexjit mods>")
        kernel = _kernel.compile(program, head_dim, dtype, device, **dict(options))
        kernel.source_lines = translation.lines
    except CompileError as e:
        message, mapped = format_diagnostics(e.diagnostics, translation.lines, translation.fallback)
        raise CompileError(message, [Diagnostic(*d) for d in mapped]) from None
    with _kernels_lock:
        _kernels[key] = kernel
        while len(_kernels) > _KERNELS_KEPT:
            _kernels.popitem(last=False)
    translation.kernels[options_key] = kernel
    return kernel


# FlexAttention's kernel_options that mean something here, and what they become. Its forward tile
# (BLOCK_M query rows, BLOCK_N keys, num_warps, num_stages) overrides those fields of the table's
# tile; the backward's (BLOCK_M1, ...) and Triton's own hints (PRESCALE_QK, ...) are the kernels'
# own business and are ignored, as FlexAttention ignores keys its template does not read.
_TILE_OPTIONS = {"BLOCK_M": "block_m", "BLOCK_N": "block_n", "num_warps": "warps", "num_stages": "stages",
                 "q_in_registers": "q_in_registers", "persistent": "persistent"}
_OTHER_OPTIONS = {"family": "family", "FAMILY": "family", "backward_family": "backward_family",
                  "BACKWARD_FAMILY": "backward_family", "math": "math", "arch": "arch"}


def _kernel_options(kernel_options):
    """FlexAttention's kernel_options as a hashable key of compile()'s options: family,
    backward_family, math, arch, and the tile fields given."""
    if kernel_options is None:
        return ()
    if not isinstance(kernel_options, dict):
        raise ArgumentError(f"kernel_options: expected a dict, got {type(kernel_options).__name__}")
    out, tile = [], []
    for key, value in kernel_options.items():
        if key in _OTHER_OPTIONS:
            out.append((_OTHER_OPTIONS[key], str(value)))
        elif key in _TILE_OPTIONS:
            field = _TILE_OPTIONS[key]
            if field in ("q_in_registers", "persistent"):
                tile.append((field, bool(value)))
            elif isinstance(value, numbers.Integral) and not isinstance(value, bool):
                tile.append((field, int(value)))
            else:
                raise ArgumentError(f"kernel_options[{key!r}]: expected an int, got {value!r}")
    if tile:
        out.append(("tile", tuple(sorted(tile))))
    return tuple(sorted(out))


def _check_heads(q, k, v, enable_gqa):
    try:
        q_shape, k_shape, v_shape = q.shape, k.shape, v.shape
    except AttributeError:  # not arrays: named (only here, off the calls' path)
        _kernel._require_arrays(q=q, k=k, v=v)
        raise
    if len(q_shape) != 4 or len(k_shape) != 4 or len(v_shape) != 4:
        raise ArgumentError(f"q, k and v must be [B, H, T, D]; got ranks {len(q_shape)}, {len(k_shape)} and "
                            f"{len(v_shape)}")
    hq, hkv = q_shape[1], k_shape[1]
    if hq != hkv and not enable_gqa:
        raise ArgumentError(f"q has {hq} heads and k {hkv}: pass enable_gqa=True for grouped-query attention")


def prepare(q, k, v, score_mod, mask_mod, sink, kernel_options):
    """The kernel and the bound values for a call."""
    translation, bind = _mods.translate(score_mod=score_mod, mask_mod=mask_mod, sink=sink)
    dtype = _arrays.dtype_name(q)
    if dtype not in ("bf16", "fp16", "f32", "fp8_e4m3"):
        raise ArgumentError(f"q has elements of type {getattr(q, 'dtype', '?')}; use bfloat16, float16, float32 or "
                            "float8_e4m3fn (flexjit.e4m3 for numpy)")
    kernel = kernel_for(translation, dtype, _arrays.device_name(q), int(q.shape[-1]), int(v.shape[-1]), kernel_options)
    return kernel, bind


def kernel_for(translation, dtype, device, head_dim, head_dim_v, kernel_options):
    """The kernel of a translation for q of `dtype` ("bf16", "fp16", "f32", "fp8_e4m3") on `device`
    ("cuda", "cpu") with these head dims."""
    options = _kernel_options(kernel_options) if kernel_options else ()
    if device == "cpu":  # the cpu kernels have no tile and one backward
        options = tuple(o for o in options if o[0] not in ("tile", "backward_family"))
    if head_dim_v != head_dim:  # a value head dim of its own (MLA shapes)
        options = options + (("head_dim_v", head_dim_v),)
    return _compiled(translation, head_dim, dtype, device, options)


def attention(q, k, v, score_mod=None, mask_mod=None, sink=None, scale=None, enable_gqa=False, return_lse=False,
              kernel_options=None, *, q_descale=None, k_descale=None, v_descale=None):
    """softmax(score_mod(scale * q k^T) masked by mask_mod) v, as torch's flex_attention computes it,
    with q [B, Hq, Tq, D], k [B, Hkv, Tkv, D] and v [B, Hkv, Tkv, Dv] (Dv may differ from D: on
    the cpu, and D = 192 with Dv = 128 on the Hopper forward). Returns out [B, Hq, Tq, Dv], or
    (out, lse) with return_lse.
    The first call with a new mod compiles it (cached by its text); new values of what the mods
    read never recompile. sink(b, h) is flexjit's learned-sink logit (docs/language.md).
    FP8 inputs (torch.float8_e4m3fn, or flexjit.e4m3 of numpy codes) run an fp8_e4m3 kernel, with
    q_descale, k_descale, v_descale as Kernel.forward takes them."""
    _check_heads(q, k, v, enable_gqa)
    kernel, bind = prepare(q, k, v, score_mod, mask_mod, sink, kernel_options)
    return kernel.forward(q, k, v, bind=bind, scale=scale, return_lse=return_lse, q_descale=q_descale,
                          k_descale=k_descale, v_descale=v_descale)


def attention_backward(q, k, v, out, lse, dout, score_mod=None, mask_mod=None, sink=None, scale=None,
                       enable_gqa=False, capture_grads=False, kernel_options=None, deterministic=False):
    """(dq, dk, dv) of attention(...) given its out, lse and dout = d loss / d out. With
    capture_grads, (dq, dk, dv, {name: gradient}) for every float array score_mod or sink reads,
    named as the program names it (the variable's own name where it is free). deterministic: as
    Kernel.backward's."""
    _check_heads(q, k, v, enable_gqa)
    kernel, bind = prepare(q, k, v, score_mod, mask_mod, sink, kernel_options)
    grads = ()
    if capture_grads:
        grads = tuple(name for name, value in bind.items()
                      if _arrays.is_array(value) and _arrays.dtype_name(value) in ("bf16", "fp16", "f32", "f64"))
    return kernel.backward(q, k, v, out, lse, dout, bind=bind, scale=scale, grads=grads, deterministic=deterministic)
