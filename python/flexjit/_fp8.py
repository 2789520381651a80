"""FP8 E4M3 inputs from numpy, which has no 8-bit float type: codes in uint8 arrays, made and read
by the library's own conversions (include/flexjit/fp8.hpp, so that they round as the kernels
read), and e4m3(), which makes such an array an fp8_e4m3 input. torch.float8_e4m3fn tensors need
none of this."""

from . import _arrays, _flexjit
from .errors import ArgumentError, kind_of


def e4m3(codes):
    """A numpy uint8 array of E4M3 codes (to_e4m3's) as an fp8_e4m3 array for Kernel.forward and
    flexjit.attention (q, k, v), without a copy: same shape and strides."""
    import numpy

    if not isinstance(codes, numpy.ndarray) or codes.dtype != numpy.uint8:
        raise ArgumentError(f"e4m3: expected a numpy uint8 array of E4M3 codes, got {_described(codes)}")
    return _arrays.Reinterpreted(codes, "fp8_e4m3")


def to_e4m3(values):
    """The uint8 E4M3 codes of values (as float32 first), same shape: rounded to nearest even,
    finite values past +-448 (and infinities) saturated to +-448, NaN to 0x7f with its sign."""
    import numpy

    return _flexjit.float_to_e4m3_bits(numpy.asarray(values, dtype=numpy.float32))


def from_e4m3(codes):
    """The float32 values of E4M3 codes (a uint8 array, or e4m3(...) of one), same shape: exact;
    0x7f and 0xff are NaN."""
    import numpy

    if type(codes) is _arrays.Reinterpreted and codes.dtype_name == "fp8_e4m3":
        codes = codes.bits
    if not isinstance(codes, numpy.ndarray) or codes.dtype != numpy.uint8:
        raise ArgumentError(f"from_e4m3: expected a numpy uint8 array of E4M3 codes, got {_described(codes)}")
    return _flexjit.e4m3_bits_to_float(codes)


def _described(x):
    dtype = getattr(x, "dtype", None)
    return f"{kind_of(x)} of {dtype}" if dtype is not None else kind_of(x)
