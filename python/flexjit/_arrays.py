"""numpy arrays and torch tensors seen one way: their element type by flexjit's name, where they
live, a DLPack capsule for the C++ side, and new arrays of the same library for results. torch is
never imported here: a tensor's own module answers for it."""

import sys

# flexjit's element-type names (the C++ DType) by numpy dtype name and torch dtype.
_NUMPY_DTYPES = {
    "float16": "fp16", "float32": "f32", "float64": "f64", "int8": "i8", "int16": "i16",
    "int32": "i32", "int64": "i64", "uint8": "u8", "bool": "boolean",
}
_TORCH_DTYPES = {
    "torch.bfloat16": "bf16", "torch.float16": "fp16", "torch.float32": "f32", "torch.float64": "f64",
    "torch.int8": "i8", "torch.int16": "i16", "torch.int32": "i32", "torch.int64": "i64",
    "torch.uint8": "u8", "torch.bool": "boolean", "torch.float8_e4m3fn": "fp8_e4m3",
}
# Element types numpy lacks, held in numpy integers of their width (Reinterpreted): bf16 as int16,
# not uint16, as the C++ side reads no uint16.
_NUMPY_BITS = {"fp8_e4m3": "uint8", "bf16": "int16"}


# The other way round, for allocating results.
_NUMPY_BY_NAME = {v: k for k, v in _NUMPY_DTYPES.items()}
_TORCH_BY_NAME = {v: k.split(".")[1] for k, v in _TORCH_DTYPES.items()}


class Reinterpreted:
    """A numpy integer array whose elements flexjit reads as a type numpy lacks, by flexjit's name:
    FP8 E4M3 codes in uint8 (flexjit.e4m3) or bf16 in int16 (what an fp8 kernel writes for numpy
    inputs). It crosses as the pair (capsule, name)."""

    __slots__ = ("bits", "dtype_name")

    def __init__(self, bits, dtype_name):
        self.bits, self.dtype_name = bits, dtype_name

    shape = property(lambda self: self.bits.shape)
    strides = property(lambda self: self.bits.strides)
    ndim = property(lambda self: self.bits.ndim)
    dtype = property(lambda self: self.dtype_name)

    def __repr__(self):
        return f"<{self.dtype_name} elements of {self.bits!r}>"


# The classes seen so far, tensor classes and others (the test below is slow for a per-call path).
_torch_types, _other_types = set(), set()


def is_torch(x):
    kind = type(x)
    if kind in _torch_types:
        return True
    if kind in _other_types:
        return False
    if (kind.__module__ or "").startswith("torch") and hasattr(x, "data_ptr"):
        _torch_types.add(kind)
        return True
    if len(_other_types) < 64:  # bounded: a program may make classes without end
        _other_types.add(kind)
    return False


def is_array(x):
    if is_torch(x) or type(x) is Reinterpreted:
        return True
    numpy = sys.modules.get("numpy")
    return numpy is not None and isinstance(x, numpy.ndarray)


# Names found so far, by dtype object (numpy's and torch's apart): a mod's captured arrays are
# named at every call, and numpy's dtype.name is slow.
_torch_names, _numpy_names = {}, {}


def dtype_name(x):
    """flexjit's name of x's element type ("bf16", "f32", ...), or None for one it has no name for."""
    if is_torch(x):
        return torch_dtype_name(x.dtype)
    if type(x) is Reinterpreted:
        return x.dtype_name
    dtype = x.dtype
    name = _numpy_names.get(dtype, False)
    if name is False:
        name = _numpy_names[dtype] = _NUMPY_DTYPES.get(dtype.name)
    return name


_torch_dtypes = {}  # torch dtype objects by flexjit's name, found once


def _torch_dtype(name):
    dtype = _torch_dtypes.get(name)
    if dtype is None:
        dtype = _torch_dtypes[name] = getattr(sys.modules["torch"], _TORCH_BY_NAME[name])
    return dtype


def torch_dtype_name(dtype):
    """flexjit's name of a torch dtype, or None."""
    name = _torch_names.get(dtype, False)
    if name is False:
        name = _torch_names[dtype] = _TORCH_DTYPES.get(str(dtype))
    return name


def on_host(x):
    """x itself when it is in host memory; a host copy of a CUDA tensor."""
    return x.detach().cpu() if is_torch(x) and x.is_cuda else x


def device_name(x):
    """"cpu" or "cuda"."""
    if is_torch(x):
        return "cuda" if x.is_cuda else "cpu"
    return "cpu"


_to_dlpack = None  # torch's, found on the first tensor (an import statement per call costs)
_torch_fp8 = None  # torch.float8_e4m3fn, found with it (absent from old torch versions)


def capsule(x):
    """What the C++ side reads: a DLPack capsule, or (capsule, type name) for integers holding
    another type: numpy bools (True: older numpy exports them only as bytes), Reinterpreted arrays
    and torch float8 tensors (whose own DLPack export varies with torch's version)."""
    # The known tensor class tested inline: this runs for every array of every call.
    if type(x) in _torch_types or is_torch(x):
        global _to_dlpack, _torch_fp8
        if _to_dlpack is None:
            from torch.utils.dlpack import to_dlpack as _to_dlpack
            _torch_fp8 = getattr(sys.modules["torch"], "float8_e4m3fn", None)
        if x.requires_grad:
            x = x.detach()
        if x.dtype is _torch_fp8:
            return (_to_dlpack(x.view(_torch_dtype("u8"))), "fp8_e4m3")
        return _to_dlpack(x)
    if type(x) is Reinterpreted:
        return (_numpy_capsule(x.bits), x.dtype_name)
    numpy = sys.modules.get("numpy")
    if numpy is None or not isinstance(x, numpy.ndarray):  # another library's array: its own export
        return x.__dlpack__()
    if x.dtype == numpy.bool_:
        return (_numpy_capsule(x.view(numpy.uint8)), True)
    return _numpy_capsule(x)


def _numpy_capsule(x):
    # numpy refuses to export a read-only array (DLPack cannot say read-only); flexjit only reads
    # inputs, but a copy is the simple way through.
    # DLPack has no byte order: a big-endian array crosses as a native-order copy.
    if not x.dtype.isnative:
        return x.astype(x.dtype.newbyteorder("=")).__dlpack__()
    return (x if x.flags.writeable else x.copy()).__dlpack__()


def empty(like, shape, dtype):
    """A new array of like's library and device: shape, flexjit element type `dtype`."""
    if is_torch(like):
        # like's device without asking for it (a device object per call). empty_like, where it gives
        # the same (like's shape and type, row-major), costs less than new_empty (bench/NOTES.md).
        if shape == like.shape and torch_dtype_name(like.dtype) == dtype and like.is_contiguous():
            return sys.modules["torch"].empty_like(like)
        return like.new_empty(shape, dtype=_torch_dtype(dtype))
    import numpy

    if dtype in _NUMPY_BITS:
        return Reinterpreted(numpy.empty(shape, dtype=_NUMPY_BITS[dtype]), dtype)
    return numpy.empty(shape, dtype=_NUMPY_BY_NAME[dtype])


def widened(x):
    """x, or for bf16 held in int16 (Reinterpreted) its values as float32: exact, a bf16 being the
    upper half of a float32."""
    if type(x) is not Reinterpreted or x.dtype_name != "bf16":
        return x
    import numpy

    return (x.bits.view(numpy.uint16).astype(numpy.uint32) << 16).view(numpy.float32)


def zeros(like, shape, dtype):
    out = empty(like, shape, dtype)
    out[...] = 0
    return out


_raw_stream = None  # torch's current-stream handle by device index, found on the first CUDA tensor


def stream(x):
    """The CUstream a call on x's device is enqueued on: torch's current stream; 0 for the host."""
    if is_torch(x) and x.is_cuda:
        global _raw_stream
        if _raw_stream is None:
            torch = sys.modules["torch"]
            # The handle alone, without building a torch.cuda.Stream per call, where torch has it.
            _raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None) or \
                (lambda index: torch.cuda.current_stream(index).cuda_stream)
        return _raw_stream(x.get_device())  # an int: x.device would build a device object per call
    return 0


def cast(x, dtype):
    """x in flexjit element type `dtype` (x itself when it already is)."""
    if dtype_name(x) == dtype:
        return x
    if is_torch(x):
        return x.to(_torch_dtype(dtype))
    return x.astype(_NUMPY_BY_NAME[dtype])


def contiguous(x):
    """x, or a row-major copy of it."""
    if is_torch(x):
        return x.contiguous()
    import numpy

    return numpy.ascontiguousarray(x)
