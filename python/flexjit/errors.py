"""What flexjit raises. Every class derives from flexjit.Error; the subclasses say whose fault it
was, as in the C++ library (docs/api.md, "Errors")."""

from typing import NamedTuple


class Diagnostic(NamedTuple):
    """One problem found in a program: where (file, 1-based line and column) and what."""

    severity: str  # "error", "warning" or "note"
    file: str
    line: int
    col: int
    message: str


class Error(Exception):
    """Anything flexjit raises."""


class CompileError(Error):
    """The program has mistakes. str() is the formatted diagnostics (file:line:col, the source
    line, a caret under the culprit); .diagnostics has them as data."""

    def __init__(self, message, diagnostics=()):
        super().__init__(message)
        self.diagnostics = list(diagnostics)


class ArgumentError(Error, ValueError):
    """A call's arguments are wrong (shapes, dtypes, strides, bindings); raised before anything runs."""


class UnsupportedError(Error):
    """The kernels cannot do what was asked (a head dim, dtype, architecture or tile)."""


class NvrtcError(Error):
    """NVRTC could not compile the generated code; .log is its log."""

    def __init__(self, message, log=""):
        super().__init__(message)
        self.log = log


class CudaError(Error):
    """A CUDA driver call failed; .code is the CUresult and .code_name its name."""

    def __init__(self, message, code=0, code_name=""):
        super().__init__(message)
        self.code = code
        self.code_name = code_name


class InternalError(Error):
    """A broken invariant inside flexjit: a bug of ours. Please report it with the program."""


def kind_of(x):
    """x's type with its article, for messages: "an int", "a list"."""
    name = type(x).__name__
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"
