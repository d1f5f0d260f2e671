"""The scalar functions CPU kernels apply: `_backends.scalar`'s, with float32 exp, sigmoid,
tanh and log from `kernels.exp32`.

`_backends.scalar` is written once for both devices, and there exp is ``math.exp``: on the
CPU a scalar call into libm per element (Numba has no SVML here), ~10x slower than a
vector loop. The CPU's generated modules (the elementwise loops, fused programs, fused
reductions and row prologues) import this module in its place, as ``_scalar``: it
answers every name with scalar.py's function except `exp`, `sigmoid`, `tanh` and `log`,
whose float32 specialisations are `exp32.exp32`, `sigmoid32`, `tanh32` and `log32` (other
dtypes keep scalar.py's code). So eager ops and fused programs compute with the same function and
stay equal bit for bit. CUDA's kernels keep scalar.py's functions (libdevice's expf).

`SOURCES` lists the files a generated module's kernels inline through here: they key
its cache directory (`codegen.load`), so a change in any of them recompiles.
"""
import math

from numba import types
from numba.extending import overload

from ... import scalar as _scalar
from . import exp32 as _exp32

__all__ = ["exp", "sigmoid", "tanh", "log", "SOURCES"]

SOURCES = (_scalar.__file__, __file__, _exp32.__file__)


# The options of the loops that inline the twins (a float division by zero gives inf/NaN).
_JIT = {"error_model": "numpy"}


# Each twin is a plain function that compiled code inlines (the generators wrap it in
# njit(inline="always")); it calls a helper whose overload picks by the argument's type,
# which a plain function cannot do.
def exp(a):
    """exp: `exp32.exp32` on float32, `_backends.scalar.exp` (libm) on anything else."""
    return _exp_by_type(a)


def sigmoid(a):
    """sigmoid: `exp32.sigmoid32` on float32, `_backends.scalar.sigmoid` otherwise."""
    return _sigmoid_by_type(a)


def tanh(a):
    """tanh: `exp32.tanh32` on float32, `_backends.scalar.tanh` (libm) otherwise."""
    return _tanh_by_type(a)


def log(a):
    """log: `exp32.log32` on float32, `_backends.scalar.log` (NumPy's, libm) otherwise."""
    return _log_by_type(a)


def _exp_by_type(a):
    return math.exp(a)  # the Python body: never compiled (see the overload)


def _sigmoid_by_type(a):
    return _scalar.sigmoid(a)


def _tanh_by_type(a):
    return math.tanh(a)


def _log_by_type(a):
    return math.log(a)


@overload(_exp_by_type, jit_options=_JIT)
def _exp_overload(a):
    if a == types.float32:
        return lambda a: _exp32.exp32(a)
    return _scalar.exp


@overload(_sigmoid_by_type, jit_options=_JIT)
def _sigmoid_overload(a):
    if a == types.float32:
        return lambda a: _exp32.sigmoid32(a)
    return _scalar.sigmoid


@overload(_tanh_by_type, jit_options=_JIT)
def _tanh_overload(a):
    if a == types.float32:
        return lambda a: _exp32.tanh32(a)
    return _scalar.tanh


@overload(_log_by_type, jit_options=_JIT)
def _log_overload(a):
    if a == types.float32:
        return lambda a: _exp32.log32(a)
    return _scalar.log


def __getattr__(name):
    # Every other scalar function is scalar.py's own (PEP 562: asked only for names this
    # module does not define).
    return getattr(_scalar, name)
