"""Numba row kernels of softmax and log_softmax, forward and backward.

The input is viewed as (outer, size, inner) C-contiguous, softmax running along `size`.
When `inner` is 1 (softmax over the last dim) each row is contiguous: one task per row,
reading it twice (its max is taken in the previous row's exp pass, then exp and sum;
softmax writes exp and scales it in a third pass over the output, which is in cache:
`row_passes`). Otherwise a task takes a block of up to `_BLOCK` neighbouring columns of
one outer index and walks `size` with the columns as the inner, contiguous loop (a
helper call per row of the block), so that it vectorises.

exp: NumPy's and libm's exp are scalar calls here (Numba has no SVML on this machine),
~3 ns an element; float32 takes `exp32.exp32_rows` (a float32 evaluation within ~1 ulp
with IEEE edges, twice the vector lanes of the correctly rounded `exp32.exp32` that the
elementwise `exp` uses; PyTorch's softmax too takes a faster exp than its elementwise
one), which LLVM vectorises. float64 keeps libm's `math.exp`. softmax scales each row by
the reciprocal of its sum, as PyTorch's vectorised kernel does (a vector division costs
~10x a multiplication). The sums accumulate in the input's dtype, as PyTorch's CPU
kernels do for float32. Numba's own reductions compile to one serial dependency chain:
the sums here are helpers compiled with reassociation allowed, the row max LLVM's
NaN-propagating vector maximum (`row_passes`).

Every kernel is serial and releases the GIL; above `PARALLEL_THRESHOLD` elements the
backend runs it over ranges of rows (or column tasks) on several threads at once
(`threads.split`), so none compiles a prange twin. softmax and log_softmax, forward and
backward, rows and columns are eight kernels, each compiled lazily (a first step compiles
only those it runs), for float32 and float64 only (half types arrive as float32).
Numba's on-disk cache keys a kernel on this file only, and the kernels link compiled
code from `exp32.py` and `row_passes.py`: the file ends with `cache_keys.key_by_sources`,
which adds a hash of those files to every kernel's cache key, so a change there
recompiles them instead of loading stale machine code. The cross entropy rows
(`kernels.cross_entropy`) share the row passes.
"""
import math

import numpy as np
from numba import njit

from .. import threads
from . import exp32 as _exp32_module
from . import row_passes as _row_passes_module
from .cache_keys import key_by_sources
from .row_passes import exp as _exp
from .row_passes import exp_store_sum_and_max, row_max, sum_exp_and_max

__all__ = ["softmax_forward", "softmax_backward", "PARALLEL_THRESHOLD"]

# Rows of 1000 float32, 1 / 2 threads (µs, 2026-11-28, a quiet 2-core machine): softmax
# 128 rows 133 / 277, 256 rows 231 / 262, 512 rows 425 / 356, 1000 rows 816 / 549; the
# cross entropy alike, when handing a part to the pool cost ~100-140 us (threads woken from
# sleep). The pool's workers now spin between parts (`cpu/pool.py`: ~12 us a split), and
# the split pays from ~64K elements: softmax of 128 rows 123 / 103-108 us (op included).
PARALLEL_THRESHOLD = 1 << 16
_BLOCK = 512  # columns per task when softmax runs along a non-last dim

# The sums' fast-math flags (`row_passes`): reassociation on small helpers only.
_SUM_FLAGS = {"contract", "reassoc", "nsz"}
# The kernels' own options: multiply-adds contracted, nothing reassociated (see above).
_OPTIONS = dict(cache=True, nogil=True, error_model="numpy", fastmath={"contract"})


# Row sums of the backward kernels, by row index as the row passes (see row_passes.py).
@njit(fastmath=_SUM_FLAGS, nogil=True, cache=True)
def _sum(a, r):
    total = a.dtype.type(0.0)
    for j in range(a.shape[1]):
        total += a[r, j]
    return total


@njit(fastmath=_SUM_FLAGS, nogil=True, cache=True)
def _dot(a, b, r):
    total = a.dtype.type(0.0)
    for j in range(a.shape[1]):
        total += a[r, j] * b[r, j]
    return total


# softmax and log_softmax are kernels of their own, not one kernel with a `log` switch:
# a first step compiles only the one it runs (and only its helpers). Each takes the next
# row's max in this row's exp pass (`row_passes`); the last row pairs with itself.
@njit(**_OPTIONS)
def _rows_softmax(x, y):
    n, size = x.shape
    peak = row_max(x, 0) if n else x.dtype.type(0.0)
    for r in range(n):
        total, ahead_peak = exp_store_sum_and_max(x, r, peak, y, r + 1 if r + 1 < n else r)
        # Times the reciprocal, as PyTorch's vectorised softmax: a vector division costs
        # ~10x a multiplication here.
        scale = x.dtype.type(1.0) / total
        for j in range(size):
            y[r, j] = y[r, j] * scale
        peak = ahead_peak


@njit(**_OPTIONS)
def _rows_log_softmax(x, y):
    n, size = x.shape
    peak = row_max(x, 0) if n else x.dtype.type(0.0)
    for r in range(n):
        total, ahead_peak = sum_exp_and_max(x, r, peak, r + 1 if r + 1 < n else r)
        log_total = math.log(total)  # -inf for an all -inf row, NaN for a NaN
        for j in range(size):
            y[r, j] = (x[r, j] - peak) - log_total
        peak = ahead_peak


# The column kernels work on one (size, width) block at a time, a row of `width`
# contiguous columns per call of these helpers: Numba vectorises a loop over a 1-d
# contiguous slice, not the same loop written inside the 3-d body.
@njit(fastmath=True, nogil=True, cache=True)
def _max_into(peak, row):
    for j in range(row.shape[0]):
        peak[j] = row[j] if row[j] > peak[j] else peak[j]


@njit(fastmath={"contract"}, nogil=True, cache=True)
def _exp_sum_into(total, row, peak):
    for j in range(row.shape[0]):
        total[j] += _exp(row[j] - peak[j])


@njit(fastmath={"contract"}, nogil=True, cache=True)
def _exp_store_sum_into(total, row, peak, out):
    for j in range(row.shape[0]):
        e = _exp(row[j] - peak[j])
        out[j] = e
        total[j] += e


@njit(fastmath={"contract"}, nogil=True, cache=True)
def _log_softmax_into(out, row, peak, log_total):
    for j in range(row.shape[0]):
        out[j] = (row[j] - peak[j]) - log_total[j]


@njit(fastmath={"contract"}, nogil=True, cache=True)
def _divide_into(out, total):
    for j in range(out.shape[0]):
        out[j] = out[j] / total[j]


@njit(**_OPTIONS)
def _columns_peak(x, o, j0, j1):
    peak = np.full(j1 - j0, -np.inf, x.dtype)
    for c in range(x.shape[1]):
        _max_into(peak, x[o, c, j0:j1])
    return peak


# Task t of the column kernels: block t % blocks of outer index t // blocks (a task range,
# so that threads can share the tasks out: `_run_columns`).
@njit(**_OPTIONS)
def _columns_softmax(x, y, t_lo, t_hi):
    outer, size, inner = x.shape
    blocks = (inner + _BLOCK - 1) // _BLOCK
    for task in range(t_lo, t_hi):
        o = task // blocks
        j0 = (task % blocks) * _BLOCK
        j1 = min(j0 + _BLOCK, inner)
        peak = _columns_peak(x, o, j0, j1)
        total = np.zeros(j1 - j0, x.dtype)
        for c in range(size):
            _exp_store_sum_into(total, x[o, c, j0:j1], peak, y[o, c, j0:j1])
        for c in range(size):
            _divide_into(y[o, c, j0:j1], total)


@njit(**_OPTIONS)
def _columns_log_softmax(x, y, t_lo, t_hi):
    outer, size, inner = x.shape
    blocks = (inner + _BLOCK - 1) // _BLOCK
    for task in range(t_lo, t_hi):
        o = task // blocks
        j0 = (task % blocks) * _BLOCK
        j1 = min(j0 + _BLOCK, inner)
        peak = _columns_peak(x, o, j0, j1)
        total = np.zeros(j1 - j0, x.dtype)
        for c in range(size):
            _exp_sum_into(total, x[o, c, j0:j1], peak)
        log_total = np.log(total)
        for c in range(size):
            _log_softmax_into(y[o, c, j0:j1], x[o, c, j0:j1], peak, log_total)


@njit(**_OPTIONS)
def _rows_softmax_backward(g, y, gx):
    # gx = y * (g - sum(g * y))
    n, size = g.shape
    for r in range(n):
        total = _dot(g, y, r)
        for j in range(size):
            gx[r, j] = y[r, j] * (g[r, j] - total)


@njit(**_OPTIONS)
def _rows_log_softmax_backward(g, y, gx):
    # gx = g - exp(y) * sum(g)
    n, size = g.shape
    for r in range(n):
        total = _sum(g, r)
        for j in range(size):
            gx[r, j] = g[r, j] - _exp(y[r, j]) * total


@njit(fastmath={"contract"}, nogil=True, cache=True)
def _add_into(total, row):
    for j in range(row.shape[0]):
        total[j] += row[j]


@njit(fastmath={"contract"}, nogil=True, cache=True)
def _multiply_add_into(total, a, b):
    for j in range(a.shape[0]):
        total[j] += a[j] * b[j]


@njit(fastmath={"contract"}, nogil=True, cache=True)
def _log_softmax_grad_into(out, g, y, total):
    for j in range(g.shape[0]):
        out[j] = g[j] - _exp(y[j]) * total[j]


@njit(fastmath={"contract"}, nogil=True, cache=True)
def _softmax_grad_into(out, g, y, total):
    for j in range(g.shape[0]):
        out[j] = y[j] * (g[j] - total[j])


@njit(**_OPTIONS)
def _columns_softmax_backward(g, y, gx, t_lo, t_hi):
    outer, size, inner = g.shape
    blocks = (inner + _BLOCK - 1) // _BLOCK
    for task in range(t_lo, t_hi):
        o = task // blocks
        j0 = (task % blocks) * _BLOCK
        j1 = min(j0 + _BLOCK, inner)
        total = np.zeros(j1 - j0, g.dtype)
        for c in range(size):
            _multiply_add_into(total, g[o, c, j0:j1], y[o, c, j0:j1])
        for c in range(size):
            _softmax_grad_into(gx[o, c, j0:j1], g[o, c, j0:j1], y[o, c, j0:j1], total)


@njit(**_OPTIONS)
def _columns_log_softmax_backward(g, y, gx, t_lo, t_hi):
    outer, size, inner = g.shape
    blocks = (inner + _BLOCK - 1) // _BLOCK
    for task in range(t_lo, t_hi):
        o = task // blocks
        j0 = (task % blocks) * _BLOCK
        j1 = min(j0 + _BLOCK, inner)
        total = np.zeros(j1 - j0, g.dtype)
        for c in range(size):
            _add_into(total, g[o, c, j0:j1])
        for c in range(size):
            _log_softmax_grad_into(gx[o, c, j0:j1], g[o, c, j0:j1], y[o, c, j0:j1], total)


def _run_rows(kernel, *arrays):
    """kernel(*arrays) over 2-d (rows, size) arrays; big ones over ranges of rows, one a
    thread (`threads.split`)."""
    if threads.parallel(arrays[0].size, PARALLEL_THRESHOLD):
        threads.split(lambda lo, hi: kernel(*(a[lo:hi] for a in arrays)), arrays[0].shape[0],
                      threads.part_count(), align=1)
    else:
        kernel(*arrays)


def _run_columns(kernel, *arrays):
    """kernel(*arrays, t_lo, t_hi) over all the (outer, block of _BLOCK columns) tasks of
    3-d arrays; big ones over ranges of tasks, one a thread."""
    outer, _, inner = arrays[0].shape
    tasks = outer * -(-inner // _BLOCK)
    if threads.parallel(arrays[0].size, PARALLEL_THRESHOLD):
        threads.split(lambda lo, hi: kernel(*arrays, lo, hi), tasks, threads.part_count(), align=1)
    else:
        kernel(*arrays, 0, tasks)


def softmax_forward(x3, log):
    """softmax (log: log_softmax) along dim 1 of the C-contiguous (outer, size, inner)
    float32/float64 array `x3`, as a new array of its shape and dtype."""
    y = np.empty_like(x3)
    if x3.size:
        if x3.shape[2] == 1:
            rows = x3.shape[:2]
            _run_rows(_rows_log_softmax if log else _rows_softmax, x3.reshape(rows), y.reshape(rows))
        else:
            _run_columns(_columns_log_softmax if log else _columns_softmax, x3, y)
    return y


def softmax_backward(g3, y3, log):
    """The input gradient of softmax (log: log_softmax) along dim 1 of (outer, size,
    inner), from the output gradient `g3` and the forward's output `y3` (both
    C-contiguous, one dtype)."""
    gx = np.empty_like(g3)
    if g3.size:
        if g3.shape[2] == 1:
            rows = g3.shape[:2]
            _run_rows(_rows_log_softmax_backward if log else _rows_softmax_backward,
                      g3.reshape(rows), y3.reshape(rows), gx.reshape(rows))
        else:
            _run_columns(_columns_log_softmax_backward if log else _columns_softmax_backward, g3, y3, gx)
    return gx


# Last, once every kernel is defined: they link exp32.py's and row_passes.py's code (see
# the docstring).
key_by_sources(globals().values(), [_exp32_module.__file__, _row_passes_module.__file__])
