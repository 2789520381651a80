"""flexjit.compile and flexjit.Kernel: a program compiled for one head dim, element type and device,
called with numpy arrays or torch tensors in FlexAttention's layout, [B, H, T, D]."""

import atexit
import numbers
import os
import re
import threading

from . import _arrays
from . import _flexjit
from .errors import ArgumentError, UnsupportedError, kind_of

_DTYPE_NAMES = {
    "bf16": "bf16", "bfloat16": "bf16", "torch.bfloat16": "bf16",
    "fp16": "fp16", "float16": "fp16", "half": "fp16", "torch.float16": "fp16",
    "f32": "f32", "fp32": "f32", "float32": "f32", "float": "f32", "torch.float32": "f32",
    "fp8_e4m3": "fp8_e4m3", "fp8": "fp8_e4m3", "float8_e4m3fn": "fp8_e4m3", "torch.float8_e4m3fn": "fp8_e4m3",
}

# Compiles started ahead of their call: joined at exit, so that none is still inside the library
# (with the GIL released) while the interpreter shuts down.
_ahead_threads = []


@atexit.register
def _join_ahead_threads():
    for thread in _ahead_threads:
        thread.join()


# Kernel.kept_pairs evaluates the mask at most this many times (about 10 s on one core): a
# larger budget would run without bound.
_KEPT_PAIRS_MAX_BUDGET = 1 << 28
# How the library ends a failed runtime assert's message: the program line it is on.
_PROGRAM_LINE = re.compile(r"\(line (\d+)\)$")

_engine_lock = threading.Lock()
_engine = None


def engine():
    """The process's one JIT engine (its memory and disk caches are shared by every call)."""
    global _engine
    with _engine_lock:
        if _engine is None:
            _engine = _flexjit.Engine()
        return _engine


def kernel_dtype(dtype):
    """flexjit's name ("bf16", "fp16", "f32", "fp8_e4m3") of a dtype given as a string, numpy or
    torch dtype."""
    # numpy and torch dtypes by name; numpy's scalar types (np.float32) by their class's name.
    text = dtype if isinstance(dtype, str) else str(getattr(dtype, "name", None) or getattr(dtype, "__name__", dtype))
    name = _DTYPE_NAMES.get(text)
    if name is None:
        raise UnsupportedError(f"dtype {text!r} is not a kernel element type; use bf16, fp16, fp8_e4m3 or float32 "
                               "(float32 on the cpu only)")
    return name


def load_program(source_or_path, name=None):
    """A checked Program from a path (str or os.PathLike naming a file) or from program text."""
    if isinstance(source_or_path, _flexjit.Program):
        return source_or_path
    if isinstance(source_or_path, os.PathLike):
        return _flexjit.Program.from_file(os.fspath(source_or_path))
    if not isinstance(source_or_path, str):
        raise ArgumentError(f"expected program text or a path, got {type(source_or_path).__name__}")
    if "\n" not in source_or_path and (source_or_path.endswith(".py") or os.path.isfile(source_or_path)):
        return _flexjit.Program.from_file(source_or_path)
    return _flexjit.Program.from_source(source_or_path, name or "program.py")


def compile(source_or_path, head_dim=128, dtype="bf16", device="cuda", *, arch="", family="", math="fast",
            tile=None, name=None, head_dim_v=0, backward_family=""):
    """Compiles a program (its text, or a path to a .py file) for one head dim, element type ("bf16",
    "fp16", "fp8_e4m3": FP8 q, k, v with bf16 out, forward only; "float32" too on the cpu) and
    device ("cuda" or "cpu"). tile: a dict of the fields of the CUDA tile to override (block_m,
    block_n, warps, stages, q_in_registers, persistent); the others are the table's. head_dim_v:
    the head dim of v and out when it differs from q's and k's (0: the same; cpu kernels only for
    now). family / backward_family: the forward's / the backward's kernel family by name ("" : the
    first that serves the target). Raises flexjit.CompileError with diagnostics pointing into the
    program, UnsupportedError for a shape the kernels do not serve."""
    program = load_program(source_or_path, name)
    device = _device_kind(device)
    if math not in ("fast", "exact"):
        raise ArgumentError(f"math: expected 'fast' or 'exact', got {math!r}")
    for what, value in (("head_dim", head_dim), ("head_dim_v", head_dim_v)):
        if not isinstance(value, numbers.Integral) or isinstance(value, bool) or not 0 <= value < 1 << 31:
            raise ArgumentError(f"{what}: expected a non-negative int, got {value!r}")
    if tile is not None and not isinstance(tile, dict):
        raise ArgumentError(f"tile: expected a dict of tile fields (block_m, block_n, ...), got {type(tile).__name__}")
    native = engine().compile(program, head_dim, getattr(_flexjit.DType, kernel_dtype(dtype)), device, arch,
                              family, math, tile=None if tile is None else dict(tile), head_dim_v=int(head_dim_v),
                              backward_family=backward_family)
    return Kernel(native, program)


def _device_kind(device):
    """"cpu" or "cuda" for a device given as a string or torch.device ("cuda:1" is a CUDA device)."""
    text = str(device)
    if text == "cpu":
        return "cpu"
    if text == "cuda" or text.startswith("cuda:"):
        return "cuda"
    raise ArgumentError(f"device: expected 'cpu' or 'cuda', got {device!r}")


def _scale(scale):
    """A call's scale as a float (None: 1 / sqrt(head dim), the kernel's default)."""
    if scale is None or type(scale) is float:
        return scale
    if not isinstance(scale, (str, bytes)):  # float() would parse those
        try:
            return float(scale)
        except (TypeError, ValueError, OverflowError):
            pass
    raise ArgumentError(f"scale: expected a number, got {scale!r}")


def bound_values(bind):
    """{name: value} for the C++ side: bools, ints and floats as they are, arrays as capsules."""
    out = {}
    if bind is not None and not isinstance(bind, dict):
        raise ArgumentError(f"bind: expected a dict of names to values, got {type(bind).__name__}")
    for name, value in (bind or {}).items():
        if isinstance(value, bool):
            out[name] = value
        elif isinstance(value, numbers.Integral):
            out[name] = int(value)
        elif isinstance(value, numbers.Real):
            out[name] = float(value)
        elif _arrays.is_array(value) or hasattr(value, "__dlpack__"):
            out[name] = _arrays.capsule(value)
        else:
            raise ArgumentError(
                f"bind[{name!r}]: {kind_of(value)} cannot be bound; bind an int, float, bool or an array")
    return out


def capture_gradient_arrays(bind, grads):
    """{name: float32 array shaped like bind[name], uninitialised} for each name in grads."""
    out = {}
    for name in grads:
        if name not in bind:
            raise ArgumentError(f"grads: {name!r} is not bound; bind it to get its gradient")
        out[name] = _arrays.empty(bind[name], tuple(bind[name].shape), "f32")
    return out


def _optional(x):
    return None if x is None else _arrays.capsule(x)


def _descale(q, factor, name):
    """An fp8 kernel's descale factor for the C++ side: None, an array's capsule, or a number as a
    one-element float32 array beside q."""
    if factor is None:
        return None
    if isinstance(factor, numbers.Real) and not isinstance(factor, bool):
        array = _arrays.empty(q, (1,), "f32")
        array[...] = float(factor)
        return _arrays.capsule(array)
    if _arrays.is_array(factor) or hasattr(factor, "__dlpack__"):
        return _arrays.capsule(factor)
    raise ArgumentError(f"{name}: expected a float32 array (one element or [B, Hkv]) or a number, got "
                        f"{type(factor).__name__}")


def _require_arrays(**named):
    for name, x in named.items():
        if not (_arrays.is_array(x) or hasattr(x, "__dlpack__")):
            raise ArgumentError(
                f"{name}: expected an array with __dlpack__ (a numpy array or a torch tensor), got {type(x).__name__}")


class Kernel:
    """A compiled program. forward() and backward() take numpy arrays (cpu kernels) or torch
    tensors (either), q [B, Hq, Tq, D], k and v [B, Hkv, Tkv, D], any strides."""

    def __init__(self, native, program):
        self._native = native
        self.program = program
        self._fp8 = native.dtype == _flexjit.DType.fp8_e4m3  # its out is bf16, whatever q's type
        self._needs_block_mask = native.needs_block_mask  # read once: every forward call asks
        self._backward_ahead = {}  # (grads, deterministic) -> the thread compiling that backward ahead
        self.source_lines = None  # a program made from Python mods: where its lines came from
        self._ahead_lock = threading.Lock()

    device = property(lambda self: self._native.device)
    family = property(lambda self: self._native.family)
    entry_name = property(lambda self: self._native.entry_name)
    head_dim = property(lambda self: self._native.head_dim)
    head_dim_v = property(lambda self: self._native.head_dim_v, doc="the head dim of v and out")
    arch = property(lambda self: self._native.arch)
    dtype = property(lambda self: self._native.dtype.name)
    needs_block_mask = property(lambda self: self._native.needs_block_mask)
    tile = property(lambda self: self._native.tile, doc="the CUDA tile: {block_m, block_n, warps, stages, ...}")

    def parameters(self):
        """[(name, kind, dtype, rank)]: what a call binds, in declaration order."""
        return [(n, kind, dtype.name, rank) for n, kind, dtype, rank in self.program.parameters]

    def cuda_source(self, with_templates=False):
        return self._native.cuda_source(with_templates)

    def ptx(self, pass_="forward"):
        """What NVRTC makes of a pass ("forward", "decode", "backward" or "chunk"; all but the
        forward are compiled first when they are not yet)."""
        return self._native.ptx(pass_)

    def cubin(self, pass_="forward"):
        return self._native.cubin(pass_)

    def compile_report(self, pass_="forward"):
        """ptxas's figures for a pass's main entry: {entry, family, tile, registers, stack_bytes,
        spill_bytes, warnings}."""
        return self._native.compile_report(pass_)

    def may_keep_any(self, Tq, Tkv, bind=None, *, q_offset=0, kv_offset=0):
        """Whether a forward call of Tq query rows and Tkv keys at these global positions may keep
        any (query, key) pair under mask_mod with bind's scalars. False is exact: every row of that
        call sees no key and its backward gives zero gradients, so a context-parallel step can skip
        it (flexjit.ring does). True may be conservative. Host analysis only: nothing compiles or runs."""
        return self._native.may_keep_any(int(Tq), int(Tkv), bound_values(bind), int(q_offset), int(kv_offset))

    def kept_pairs(self, bounds, B=1, H=1, bind=None, *, budget=1 << 22):
        """How many (query, key) pairs mask_mod keeps between chunks of one sequence: bounds are the
        chunk edges [0, e_1, ..., T]; returns n rows of n numbers (query chunk, key chunk), summed
        over batch entries [0, B) and heads [0, H) with bind's values (CUDA tensors are copied to
        the host). Exact when T^2 * B * H <= budget, else estimated from about `budget` evenly
        spaced samples (budget: at most 2^28 evaluations, about 10 s); block and token lists are not consulted. Host evaluation of mask_mod only:
        nothing compiles or runs. What flexjit.ring.balanced_chunks balances."""
        if not isinstance(budget, numbers.Integral) or not 0 < budget <= _KEPT_PAIRS_MAX_BUDGET:
            raise ArgumentError(f"budget: expected an int in [1, {_KEPT_PAIRS_MAX_BUDGET}] (mask evaluations), got "
                                f"{budget!r}")
        host = {name: _arrays.on_host(x) for name, x in (bind or {}).items()}
        flat = self._native.kept_pairs([int(e) for e in bounds], int(B), int(H), bound_values(host), int(budget))
        n = len(bounds) - 1
        return [flat[i * n:(i + 1) * n] for i in range(n)]

    def compile_backward(self, grads=(), deterministic=False):
        """Compiles now the backward kernels a backward(..., grads=grads, deterministic=...) call runs,
        rather than on its first call (CUDA kernels)."""
        self._native.compile_backward(list(grads), bool(deterministic))

    def compile_decode(self):
        """Compiles the decode kernel now rather than on the first call with kv_lens (CUDA kernels)."""
        self._native.compile_decode()

    def compile_chunk(self):
        """Compiles the chunk kernel now rather than on the first call with kv_lens and 64 or more
        new tokens (chunked prefill; CUDA kernels)."""
        self._native.compile_chunk()

    def compile_backward_ahead(self, grads=(), deterministic=False):
        """Starts compiling the backward kernels that compile_backward(grads, deterministic) would, on
        a thread of their own (once per kernel and variant), so that a training step's first backward
        finds them compiled, or in progress, while its forward runs. A failure is left for the
        backward call to report. Returns the thread."""
        variant = (tuple(sorted(grads)), bool(deterministic))
        with self._ahead_lock:
            thread = self._backward_ahead.get(variant)
            if thread is None:
                def compile_quietly():
                    try:
                        self._native.compile_backward(list(variant[0]), variant[1])
                    except Exception:  # noqa: BLE001 - the backward call compiles again and raises it
                        pass

                thread = threading.Thread(target=compile_quietly, name="flexjit-backward-ahead", daemon=True)
                self._backward_ahead[variant] = thread
                thread.start()
                _ahead_threads[:] = [t for t in _ahead_threads if t.is_alive()] + [thread]
            return thread

    def forward(self, q, k, v, bind=None, scale=None, return_lse=False, *, out=None, lse=None, kv_lens=None,
                page_table=None, q_offset=0, kv_offset=0, q_descale=None, k_descale=None, v_descale=None):
        """out (or (out, lse) with return_lse) of attention under the program's mods. out and lse are
        new arrays of q's library and device unless given. q_offset, kv_offset: the global positions
        of q's and k's first rows (a shard of a longer sequence). q_descale, k_descale, v_descale
        (fp8_e4m3 kernels): what q's, k's and v's stored values are multiplied by, each a float32
        array of one element or [B, Hkv] beside q, or a number; None is 1. An fp8 kernel's out is
        bf16; numpy has none, so for numpy inputs the out it allocates comes back as float32
        holding those bf16 values."""
        if not (_arrays.is_array(q) and _arrays.is_array(k) and _arrays.is_array(v)):
            _require_arrays(q=q, k=k, v=v)  # arrays of other libraries take the __dlpack__ test
        B, Hq, Tq = q.shape[:3]
        allocated = out is None
        if allocated:
            out_dtype = "bf16" if self._fp8 else (_arrays.dtype_name(q) or self.dtype)
            out = _arrays.empty(q, (B, Hq, Tq, v.shape[-1]), out_dtype)
        if lse is None and return_lse:
            lse = _arrays.empty(q, (B, Hq, Tq), "f32")
        if q_descale is None and k_descale is None and v_descale is None:
            descales = (None, None, None)
        else:
            descales = (_descale(q, q_descale, "q_descale"), _descale(q, k_descale, "k_descale"),
                        _descale(q, v_descale, "v_descale"))
        try:
            self._native.forward(_arrays.capsule(q), _arrays.capsule(k), _arrays.capsule(v), _arrays.capsule(out),
                                 _optional(lse), bound_values(bind), _scale(scale), _arrays.stream(q),
                                 _optional(kv_lens), _optional(page_table),
                                 _optional(self._block_mask_storage(q, k, kv_lens)), int(q_offset), int(kv_offset),
                                 *descales)
        except ArgumentError as e:
            mapped = self._at_source_line(e)
            if mapped is e:
                raise
            raise mapped from e
        if allocated and self._fp8:
            out = _arrays.widened(out)
        return (out, lse) if return_lse else out

    def _at_source_line(self, error):
        """A failed runtime assert of a program made from Python mods, pointed at the user's file
        and line instead of the program's line (the lines' origins: `source_lines`, set where the
        kernel was compiled from a translation); any other error as it is."""
        lines = self.source_lines
        found = _PROGRAM_LINE.search(str(error)) if lines else None
        if found is None or not 1 <= int(found.group(1)) <= len(lines):
            return error
        origin = lines[int(found.group(1)) - 1].origin(0)
        if origin is None:
            return error
        return ArgumentError(f"{str(error)[:found.start()]}({origin[0]}:{origin[1]})")

    def _block_mask_storage(self, q, k, kv_lens):
        """Room for the tile map of a mask that reads tensors, built by the forward call itself on
        its stream (CUDA kernels; calls with a KV cache run the decode kernel, which needs none)."""
        if not self._needs_block_mask or kv_lens is not None or _arrays.device_name(q) != "cuda":
            return None
        size = self._native.block_mask_bytes(q.shape[0], q.shape[1], q.shape[2], k.shape[2])
        return _arrays.empty(q, (size,), "u8")

    def backward(self, q, k, v, out, lse, dout, bind=None, scale=None, grads=(), deterministic=False, *, q_offset=0,
                 kv_offset=0):
        """(dq, dk, dv) given a forward call's inputs, out, lse and dout = d loss / d out; with grads
        (names of captured float tensors read by score_mod or sink), (dq, dk, dv, {name: gradient}).
        deterministic: dq the same bit for bit from run to run (CUDA kernels add it in a fixed
        order, a kernel of its own compiled on first use; dk and dv always are). q_offset,
        kv_offset: the forward call's global positions."""
        _require_arrays(q=q, k=k, v=v, out=out, lse=lse, dout=dout)
        if isinstance(grads, (str, bytes)):
            raise ArgumentError(f"grads: expected a sequence of names, got the string {grads!r}")
        dq = _arrays.empty(q, tuple(q.shape), _arrays.dtype_name(q) or self.dtype)
        dk = _arrays.empty(k, tuple(k.shape), _arrays.dtype_name(k) or self.dtype)
        dv = _arrays.empty(v, tuple(v.shape), _arrays.dtype_name(v) or self.dtype)
        bind = bind or {}
        capture_grads = capture_gradient_arrays(bind, grads)
        try:
            self._native.backward(_arrays.capsule(q), _arrays.capsule(k), _arrays.capsule(v), _arrays.capsule(out),
                                  _arrays.capsule(lse), _arrays.capsule(dout), _arrays.capsule(dq),
                                  _arrays.capsule(dk), _arrays.capsule(dv), bound_values(bind), _scale(scale),
                                  {n: _arrays.capsule(g) for n, g in capture_grads.items()}, _arrays.stream(q),
                                  bool(deterministic), int(q_offset), int(kv_offset))
        except ArgumentError as e:
            mapped = self._at_source_line(e)
            if mapped is e:
                raise
            raise mapped from e
        return (dq, dk, dv, capture_grads) if grads else (dq, dk, dv)

    def __repr__(self):
        return f"<flexjit.Kernel {self.entry_name} on {self.device} ({self.family})>"
