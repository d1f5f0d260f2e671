"""Numba loops of batch norm that NumPy cannot express as one vectorised call: its
statistics, affine step and backward (two or three passes over the data where the NumPy
expression makes ten). Convolution's im2col / col2im live in `conv.py`, max pooling's
loops in `pooling.py`.

Each kernel is serial over a range of tasks (channels, or (sample, channel) planes) and
releases the GIL: from `PARALLEL_THRESHOLD` elements the ranges run on several threads
at once (`threads.split`), so no kernel compiles a prange twin (which compiles 3-5x
slower, and a first training step is mostly compiling). Nothing compiles at import; a
dtype compiles on first use (float32 and float64 only: half types reach here as
float32). The bodies inline no function of another file, so Numba's on-disk cache
(keyed on this file) can never serve a stale kernel.
"""

import numpy as np
from numba import njit

from .. import threads

__all__ = ["batch_norm_stats", "batch_norm_apply", "batch_norm_backward", "PARALLEL_THRESHOLD"]

PARALLEL_THRESHOLD = 1 << 16  # a split over threads costs ~20-40 us
_OPTIONS = dict(cache=True, nogil=True, error_model="numpy")


@njit(**_OPTIONS)
def _bn_stats(x, mean, var, t_lo, t_hi):
    # x: (N, C, L). Two passes per channel in float64 (the mean first, then the centred
    # squares): as accurate as Welford for these sizes, and vectorisable.
    n, c, length = x.shape
    count = n * length
    for ci in range(t_lo, t_hi):
        total = 0.0
        for b in range(n):
            for i in range(length):
                total += x[b, ci, i]
        m = total / count
        sq = 0.0
        for b in range(n):
            for i in range(length):
                d = x[b, ci, i] - m
                sq += d * d
        mean[ci] = m
        var[ci] = sq / count


@njit(**_OPTIONS)
def _bn_apply(x, scale, shift, out, t_lo, t_hi):
    n, c, length = x.shape
    for p in range(t_lo, t_hi):
        b = p // c
        ci = p % c
        a = scale[ci]
        s = shift[ci]
        for i in range(length):
            out[b, ci, i] = x[b, ci, i] * a + s


@njit(**_OPTIONS)
def _bn_backward(g, x, mean, invstd, weight, training, gi, gw, gb, t_lo, t_hi):
    n, c, length = x.shape
    count = n * length
    for ci in range(t_lo, t_hi):
        m = mean[ci]
        r = invstd[ci]
        sum_g = 0.0
        sum_gx = 0.0
        for b in range(n):
            for i in range(length):
                gv = g[b, ci, i]
                sum_g += gv
                sum_gx += gv * (x[b, ci, i] - m) * r
        gb[ci] = sum_g
        gw[ci] = sum_gx
        a = weight[ci] * r
        if training:
            mean_g = sum_g / count
            mean_gx = sum_gx / count
            for b in range(n):
                for i in range(length):
                    xhat = (x[b, ci, i] - m) * r
                    gi[b, ci, i] = (g[b, ci, i] - mean_g - xhat * mean_gx) * a
        else:
            for b in range(n):
                for i in range(length):
                    gi[b, ci, i] = g[b, ci, i] * a


def _run(kernel, args, tasks, size):
    """kernel(*args, 0, tasks); for `size` elements or more, over ranges of the tasks on
    several threads at once."""
    if threads.parallel(size, PARALLEL_THRESHOLD):
        threads.split(lambda lo, hi: kernel(*args, lo, hi), tasks, threads.part_count(), align=1)
    else:
        kernel(*args, 0, tasks)


def batch_norm_stats(x3):
    """Per-channel (mean, biased variance) in float64 of x3 (N, C, L)."""
    c = x3.shape[1]
    mean, var = np.empty(c), np.empty(c)
    _run(_bn_stats, (np.ascontiguousarray(x3), mean, var), c, x3.size)
    return mean, var


def batch_norm_apply(x3, scale, shift):
    """x3 * scale[c] + shift[c] for x3 (N, C, L), in x3's dtype."""
    out = np.empty_like(x3)
    _run(_bn_apply, (np.ascontiguousarray(x3), scale.astype(x3.dtype), shift.astype(x3.dtype), out),
         x3.shape[0] * x3.shape[1], x3.size)
    return out


def batch_norm_backward(g3, x3, mean, invstd, weight, training):
    """(grad_input, grad_weight, grad_bias) of batch norm for (N, C, L) arrays."""
    c = x3.shape[1]
    gi = np.empty_like(x3)
    gw, gb = np.empty(c), np.empty(c)
    _run(_bn_backward, (np.ascontiguousarray(g3, dtype=x3.dtype), np.ascontiguousarray(x3), mean.astype(np.float64),
                        invstd.astype(np.float64), weight.astype(np.float64), bool(training), gi, gw, gb),
         c, x3.size)
    return gi, gw, gb
