"""The passes over one row that softmax, log_softmax and the cross entropy rows share:
the row's max, and the exp pass (sum of exp(x - max), optionally storing the exps) that
also takes the next row's max.

Why the next row's max rides in this row's exp pass: the max pass is a row's first read,
from memory, and alone it waits on the loads (a 1000x1000 float32 softmax spent ~260 of
its ~780 us there); the exp pass reads the row again from L1 and is bound by the exp's
arithmetic. Taking row r + 1's max among row r's exps overlaps those loads with that
arithmetic (softmax 1000x1000: 0.78 -> 0.56 ms in the kernel, 2026-11-28). A row kernel
takes the first row's max alone, then each row's exp pass with the next row (the last
row with itself: its max again, from cache), so every row's sum comes from one compiled
loop, whichever range of rows a thread runs: results do not depend on the split.

The max is IEEE 754-2019's maximum (LLVM's ``llvm.maximum``: NaN if either operand is
NaN), which LLVM's loop vectoriser turns into a vector max reduction (16 float32 lanes
on AVX-512), with no fast-math assumption: a row with a NaN has a NaN max, and then all
of the row's softmax is NaN, as PyTorch's. (A ``x if x > m else m`` chain does not
vectorise without assuming no NaNs; eight scalar chains ran ~1.5x the vector loop.)

exp: float32 takes `exp32.exp32_rows` (float32 evaluation, <= ~1 ulp, IEEE edges), which
LLVM inlines and vectorises; float64 keeps libm's `math.exp`. The sums run with
fast-math flags that let LLVM reassociate them (what vectorises a reduction) and
contract multiply-adds, but keep IEEE infinities and NaNs: an -inf logit must give
exp 0, a NaN must propagate.
"""
import math

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic, overload

from . import exp32 as _exp32_module
from .cache_keys import key_by_sources
from .exp32 import exp32_rows as _exp32

__all__ = ["maximum", "exp", "row_max", "sum_exp_and_max", "exp_store_sum_and_max"]

# Only on these small helpers, never on the elementwise output loops of the kernels:
# there reassociation would turn (x - max) - log(sum) into x - (max + log(sum)) and lose
# the digits of a large max.
_SUM_FLAGS = {"contract", "reassoc", "nsz"}


@intrinsic
def maximum(typingctx, a, b):
    """The larger of two floats of one type, NaN if either is NaN (IEEE 754-2019
    maximum, LLVM's ``llvm.maximum``; +0 is larger than -0)."""
    if not (isinstance(a, types.Float) and a == b):
        return None

    def codegen(context, builder, signature, args):
        kind = args[0].type
        name = "llvm.maximum.f32" if kind == ir.FloatType() else "llvm.maximum.f64"
        function = cgutils.get_or_insert_function(builder.module, ir.FunctionType(kind, [kind, kind]), name)
        return builder.call(function, args)
    return a(a, a), codegen


def exp(x):
    """exp in x's own precision (the Python body is never called: see the overload)."""
    return math.exp(x)


# Not inlined by Numba: its implementation is compiled once either way (to type it), and
# LLVM inlines that small function into each loop and vectorises it there (the same
# vector code as a Numba-inlined copy, measured), where a Numba-level inline copies and
# re-types the body at every call site: ~0.5 s of a cold start's log_softmax.
@overload(exp)
def _exp_overload(x):
    if x == types.float32:
        return lambda x: _exp32(x)
    return lambda x: math.exp(x)


# Each pass takes the 2-d array and a row index, not a row: a view sliced per row (`x[r]`)
# keeps Numba's reference counting across the call, which cost more than the pass itself on
# short rows (softmax over (4096, 64) float32: 372 -> 217 us, (20000, 10) 1741 -> 859 us;
# (1000, 1000) no slower, 474 -> 424 us, one quiet run, 2026-11-28).
#
# fastmath=False said, not left unset: an unset flag set is inherited from the first
# fast-math caller that compiles the function, and kept in the disk cache (exp32.py); the
# vector max needs no fast-math flag.
@njit(nogil=True, cache=True, fastmath=False)
def row_max(x, r):
    """The max of row `r` of the 2-d C-contiguous float array `x` (-inf if the row is
    empty, NaN if it holds one).

    Example:
        >>> import numpy as np
        >>> x = np.float32([[1, 3, 2], [1, np.nan, 3]])
        >>> [float(row_max(x, r)) for r in (0, 1)], float(row_max(np.float32([[]]), 0))
        ([3.0, nan], -inf)
    """
    peak = x.dtype.type(-np.inf)
    for j in range(x.shape[1]):
        peak = maximum(peak, x[r, j])
    return peak


@njit(fastmath=_SUM_FLAGS, nogil=True, cache=True)
def sum_exp_and_max(x, r, peak, ahead):
    """(sum of exp(x[r] - peak), max of row `ahead`) of the 2-d C-contiguous `x`.

    Example:
        >>> import numpy as np
        >>> [float(v) for v in sum_exp_and_max(np.array([[0.0, 0.0, 0.0], [1.0, 5.0, 2.0]]), 0, 0.0, 1)]
        [3.0, 5.0]
    """
    total = x.dtype.type(0.0)
    ahead_peak = x.dtype.type(-np.inf)
    for j in range(x.shape[1]):
        total += exp(x[r, j] - peak)
        ahead_peak = maximum(ahead_peak, x[ahead, j])
    return total, ahead_peak


@njit(fastmath=_SUM_FLAGS, nogil=True, cache=True)
def exp_store_sum_and_max(x, r, peak, out, ahead):
    """`sum_exp_and_max`, storing each exp(x[r] - peak) in row `r` of `out` on the way.

    Example:
        >>> import numpy as np
        >>> x, out = np.float32([[0, -np.inf], [2, 7]]), np.zeros((2, 2), np.float32)
        >>> [float(v) for v in exp_store_sum_and_max(x, 0, np.float32(0), out, 1)], out[0]
        ([1.0, 7.0], array([1., 0.], dtype=float32))
    """
    total = x.dtype.type(0.0)
    ahead_peak = x.dtype.type(-np.inf)
    for j in range(x.shape[1]):
        e = exp(x[r, j] - peak)
        out[r, j] = e
        total += e
        ahead_peak = maximum(ahead_peak, x[ahead, j])
    return total, ahead_peak


# Last, once every function is defined: they link exp32.py's code (see cache_keys).
key_by_sources(globals().values(), [_exp32_module.__file__])
