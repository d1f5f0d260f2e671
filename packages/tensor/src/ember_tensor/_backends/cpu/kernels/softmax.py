"""Numba row kernels of softmax and log_softmax, forward and backward, and of the
cross entropy of rows of logits (log_softmax and nll_loss in one pass, bit for bit the
values of the two: `cross_entropy_forward`/`_backward`).

The input is viewed as (outer, size, inner) C-contiguous, softmax running along `size`.
When `inner` is 1 (softmax over the last dim) each row is contiguous: one task per row,
reading it twice (max, then exp and sum; softmax writes exp and scales it in a third
pass over the output, which is in cache). Otherwise a task takes a block of up to
`_BLOCK` neighbouring columns of one outer index and walks `size` with the columns as
the inner, contiguous loop (a helper call per row of the block), so that it vectorises.

exp: NumPy's and libm's exp are scalar calls here (Numba has no SVML on this machine),
~3 ns an element; float32 takes `exp32.exp32_rows` (a float32 evaluation within ~1 ulp
with IEEE edges, twice the vector lanes of the correctly rounded `exp32.exp32` that the
elementwise `exp` uses; PyTorch's softmax too takes a faster exp than its elementwise
one), which LLVM vectorises. float64 keeps libm's `math.exp`. softmax scales each row by
the reciprocal of its sum, as PyTorch's vectorised kernel does (a vector division costs
~10x a multiplication). softmax (1000, 1000) float32 went 1.47-1.51x -> 1.09x PyTorch's
time with both (1 thread, 2026-11-28, quiet). The sums accumulate in the input's dtype, as PyTorch's CPU kernels do
for float32. Numba's own reductions (a max, a sum) compile to one serial dependency
chain: `_row_max` keeps eight maxima, the sums are helpers compiled with reassociation
allowed.

Every kernel is serial and releases the GIL; above `PARALLEL_THRESHOLD` elements the
backend runs it over ranges of rows (or column tasks) on several threads at once
(`threads.split`), so none compiles a prange twin. softmax and log_softmax, forward and
backward, rows and columns are eight kernels, each compiled lazily (a first step compiles
only those it runs), for float32 and float64 only (half types arrive as float32).
Numba's on-disk cache keys a kernel on this file only, and the kernels link
`exp32.exp32_rows`'s compiled code from another file: the file ends with
`cache_keys.key_by_sources`, which adds a hash of exp32.py to every kernel's cache key,
so a change there recompiles them instead of loading stale machine code.
"""
import math

import numpy as np
from numba import njit, types
from numba.extending import overload

from .. import threads
from . import exp32 as _exp32_module
from .cache_keys import key_by_sources
from .exp32 import exp32_rows as _exp32

__all__ = ["softmax_forward", "softmax_backward", "cross_entropy_forward", "cross_entropy_backward",
           "PARALLEL_THRESHOLD"]

# Rows of 1000 float32, 1 / 2 threads (µs, 2026-11-28, a quiet 2-core machine): softmax
# 128 rows 133 / 277, 256 rows 231 / 262, 512 rows 425 / 356, 1000 rows 816 / 549; the
# cross entropy alike, when handing a part to the pool cost ~100-140 us (threads woken from
# sleep). The pool's workers now spin between parts (`cpu/pool.py`: ~12 us a split), and
# the split pays from ~64K elements: softmax of 128 rows 123 / 103-108 us (op included).
PARALLEL_THRESHOLD = 1 << 16
_BLOCK = 512  # columns per task when softmax runs along a non-last dim

# The row sums run with fast-math flags that let LLVM reassociate them (which is what
# vectorises a reduction) and contract multiply-adds, but keep IEEE infinities and NaNs:
# an -inf logit must give exp 0, a NaN must propagate. They are set on small helpers
# only: on the elementwise output loops reassociation would turn (x - max) - log(sum)
# into x - (max + log(sum)) and lose the digits of a large max.
_SUM_FLAGS = {"contract", "reassoc", "nsz"}
# The kernels' own options: multiply-adds contracted, nothing reassociated (see above).
_OPTIONS = dict(cache=True, nogil=True, error_model="numpy", fastmath={"contract"})


def _exp(x):
    """exp in x's own precision (the Python body is never called: see the overload)."""
    return math.exp(x)


# Not inlined by Numba: its implementation is compiled once either way (to type it), and
# LLVM inlines that small function into each loop and vectorises it there (the same
# vector code as a Numba-inlined copy, measured), where a Numba-level inline copies and
# re-types the body at every call site: ~0.5 s of a cold start's log_softmax.
@overload(_exp)
def _exp_overload(x):
    if x == types.float32:
        return lambda x: _exp32(x)
    return lambda x: math.exp(x)


@njit(fastmath=True, nogil=True, cache=True)
def _row_max(row):
    # Eight independent running maxima, which LLVM packs into one vector register: a
    # single chain of compares is latency-bound (~1.3 ns an element) and LLVM does not
    # vectorise it itself. Full fast math (no NaNs assumed) is safe here: a NaN in the
    # row still propagates, through x - max in the exp pass.
    n = row.shape[0]
    p0 = p1 = p2 = p3 = p4 = p5 = p6 = p7 = row.dtype.type(-np.inf)
    m = n - n % 8
    for j in range(0, m, 8):
        p0 = row[j] if row[j] > p0 else p0
        p1 = row[j + 1] if row[j + 1] > p1 else p1
        p2 = row[j + 2] if row[j + 2] > p2 else p2
        p3 = row[j + 3] if row[j + 3] > p3 else p3
        p4 = row[j + 4] if row[j + 4] > p4 else p4
        p5 = row[j + 5] if row[j + 5] > p5 else p5
        p6 = row[j + 6] if row[j + 6] > p6 else p6
        p7 = row[j + 7] if row[j + 7] > p7 else p7
    for j in range(m, n):
        p0 = row[j] if row[j] > p0 else p0
    # max(max(max(p0, p1), max(p2, p3)), max(max(p4, p5), max(p6, p7))), spelled out as
    # Python's max (the later argument wins only when larger): a builtin max compiles a
    # function of its own.
    p0 = p1 if p1 > p0 else p0
    p2 = p3 if p3 > p2 else p2
    p4 = p5 if p5 > p4 else p4
    p6 = p7 if p7 > p6 else p6
    p0 = p2 if p2 > p0 else p0
    p4 = p6 if p6 > p4 else p4
    return p4 if p4 > p0 else p0


@njit(fastmath=_SUM_FLAGS, nogil=True, cache=True)
def _sum_exp(row, peak):
    total = row.dtype.type(0.0)
    for j in range(row.shape[0]):
        total += _exp(row[j] - peak)
    return total


@njit(fastmath=_SUM_FLAGS, nogil=True, cache=True)
def _exp_store_sum(row, peak, out):
    total = row.dtype.type(0.0)
    for j in range(row.shape[0]):
        e = _exp(row[j] - peak)
        out[j] = e
        total += e
    return total


@njit(fastmath=_SUM_FLAGS, nogil=True, cache=True)
def _sum(row):
    total = row.dtype.type(0.0)
    for j in range(row.shape[0]):
        total += row[j]
    return total


@njit(fastmath=_SUM_FLAGS, nogil=True, cache=True)
def _dot(a, b):
    total = a.dtype.type(0.0)
    for j in range(a.shape[0]):
        total += a[j] * b[j]
    return total


# softmax and log_softmax are kernels of their own, not one kernel with a `log` switch:
# a first step compiles only the one it runs (and only its helpers).
@njit(**_OPTIONS)
def _rows_softmax(x, y):
    for r in range(x.shape[0]):
        xr = x[r]
        yr = y[r]
        # Times the reciprocal, as PyTorch's vectorised softmax: a vector division costs
        # ~10x a multiplication here.
        scale = xr.dtype.type(1.0) / _exp_store_sum(xr, _row_max(xr), yr)
        for j in range(xr.shape[0]):
            yr[j] = yr[j] * scale


@njit(**_OPTIONS)
def _rows_log_softmax(x, y):
    for r in range(x.shape[0]):
        xr = x[r]
        yr = y[r]
        peak = _row_max(xr)
        log_total = math.log(_sum_exp(xr, peak))  # -inf for an all -inf row, NaN for a NaN
        for j in range(xr.shape[0]):
            yr[j] = (xr[j] - peak) - log_total


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
    for r in range(g.shape[0]):
        gr, yr, out = g[r], y[r], gx[r]
        total = _dot(gr, yr)
        for j in range(gr.shape[0]):
            out[j] = yr[j] * (gr[j] - total)


@njit(**_OPTIONS)
def _rows_log_softmax_backward(g, y, gx):
    # gx = g - exp(y) * sum(g)
    for r in range(g.shape[0]):
        gr, yr, out = g[r], y[r], gx[r]
        total = _sum(gr)
        for j in range(gr.shape[0]):
            out[j] = gr[j] - _exp(yr[j]) * total


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


# Cross entropy of (N, C) logits at class-index targets: log_softmax's statistics of each
# row and the target's log-probability in the reading passes of the row, nll_loss's
# weight and ignore_index on the way; the backward writes log_softmax's gradient of
# nll_loss's one-hot gradient directly. Neither writes the (N, C) log-probabilities.
@njit(**_OPTIONS)
def _rows_cross_entropy(x, target, weight, has_weight, ignore_index, peaks, log_totals, losses, weights):
    classes = x.shape[1]
    for r in range(x.shape[0]):
        xr = x[r]
        peak = _row_max(xr)
        log_total = math.log(_sum_exp(xr, peak))
        peaks[r] = peak
        log_totals[r] = log_total
        t = target[r]
        if t == ignore_index:
            losses[r] = 0.0
            weights[r] = 0.0
            continue
        if t < 0 or t >= classes:
            return r
        w = weight[t] if has_weight else 1.0
        losses[r] = -(((xr[t] - peak) - log_total) * 1.0) * w
        weights[r] = w
    return -1


@njit(**_OPTIONS)
def _rows_cross_entropy_backward(x, target, weight, has_weight, ignore_index, peaks, log_totals, grad, per_sample,
                                 gx):
    # With G = -w * g at the target (log_softmax's input gradient from nll_loss's):
    # gx = onehot * G - exp(log_softmax(x)) * G, the log-probabilities recomputed as the
    # forward computed them.
    classes = x.shape[1]
    for r in range(x.shape[0]):
        xr, out = x[r], gx[r]
        t = target[r]
        if t == ignore_index:
            for j in range(classes):
                out[j] = 0.0
            continue
        if t < 0 or t >= classes:
            return r
        w = weight[t] if has_weight else 1.0
        g = grad[r] if per_sample else grad[0]
        G = xr.dtype.type(-w * g)
        zero = xr.dtype.type(0.0)
        peak, log_total = peaks[r], log_totals[r]
        for j in range(classes):
            out[j] = (G if j == t else zero) - _exp((xr[j] - peak) - log_total) * G
    return -1


def _checked_rows(kernel, n, size, args_of):
    """kernel(*args_of(lo, hi)) over the rows lo..hi of every range (big inputs: ranges on
    several threads at once); the first row the kernel refused, or -1."""
    if not threads.parallel(size, PARALLEL_THRESHOLD):
        return kernel(*args_of(0, n))
    refused = []

    def part(lo, hi):
        bad = kernel(*args_of(lo, hi))
        if bad >= 0:
            refused.append(lo + bad)
    threads.split(part, n, threads.part_count(), align=1)
    return min(refused) if refused else -1


def cross_entropy_forward(x2, target, weight, has_weight, ignore_index):
    """(losses, weights: float64 (N,); peaks, log_totals: x2's dtype (N,); the first
    sample whose target is out of range or -1) of C-contiguous (N, C) logits `x2` at int64
    `target`, `weight` a float64 (C,) array read when `has_weight`."""
    n = x2.shape[0]
    peaks, log_totals = np.empty(n, x2.dtype), np.empty(n, x2.dtype)
    losses, weights = np.empty(n), np.empty(n)
    bad = _checked_rows(_rows_cross_entropy, n, x2.size, lambda lo, hi: (
        x2[lo:hi], target[lo:hi], weight, has_weight, ignore_index, peaks[lo:hi], log_totals[lo:hi], losses[lo:hi],
        weights[lo:hi]))
    return losses, weights, peaks, log_totals, bad


def cross_entropy_backward(x2, target, weight, has_weight, ignore_index, peaks, log_totals, grad, per_sample):
    """(input gradient of C-contiguous (N, C) logits `x2`, the first sample whose target
    is out of range or -1), `grad` the float64 loss gradient: one per sample when
    `per_sample`, else grad[0] (already divided by the weight total for a mean)."""
    gx = np.empty_like(x2)
    bad = _checked_rows(_rows_cross_entropy_backward, x2.shape[0], x2.size, lambda lo, hi: (
        x2[lo:hi], target[lo:hi], weight, has_weight, ignore_index, peaks[lo:hi], log_totals[lo:hi],
        grad[lo:hi] if per_sample else grad, per_sample, gx[lo:hi]))
    return gx, bad


# Last, once every kernel is defined: they link exp32.py's code (see the docstring).
key_by_sources(globals().values(), [_exp32_module.__file__])
