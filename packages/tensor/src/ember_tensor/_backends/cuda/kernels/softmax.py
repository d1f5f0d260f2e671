"""Numba CUDA kernels of softmax and log_softmax: a block per row, or a thread per column.

Launched by `_backends.cuda.softmax` on flat C-contiguous float32/float64 arrays; the
block merges and launch shapes are `kernels.rows`'. Under the simulator device code runs
as Python (`math.log(0.0)` raises there), hence `safe_log`.
"""
import math

import numpy as np
from numba import cuda, float64

from .rows import INF, NAN, block_max, block_sum

__all__ = ["softmax_rows", "softmax_columns", "softmax_backward_rows", "softmax_backward_columns"]


@cuda.jit(device=True)
def safe_log(v):
    if v > 0.0:
        return math.log(v)
    if v == 0.0:
        return -INF
    return NAN


@cuda.jit(device=True)
def shifted_exp(v, single):
    # float32 inputs take float32's exp, which is far cheaper than float64's on most GPUs.
    if single:
        return math.exp(np.float32(v))
    return math.exp(v)


@cuda.jit(cache=True)
def softmax_rows(x, y, n_rows, size, log, single):
    """Softmax (log: log_softmax) of each contiguous row of `size` elements of x into y."""
    part = cuda.shared.array(0, float64)  # dynamic: blockDim.x float64s (see cuda/rows.py)
    tid = cuda.threadIdx.x
    step = cuda.blockDim.x
    for row in range(cuda.blockIdx.x, n_rows, cuda.gridDim.x):
        base = row * size
        peak = -INF
        for j in range(tid, size, step):
            v = x[base + j]
            if v > peak or v != v:
                peak = v
        peak = block_max(part, peak)
        total = 0.0
        for j in range(tid, size, step):
            total += shifted_exp(x[base + j] - peak, single)
        total = block_sum(part, total)
        if log:
            log_total = safe_log(total)
            for j in range(tid, size, step):
                y[base + j] = (x[base + j] - peak) - log_total
        else:
            for j in range(tid, size, step):
                y[base + j] = shifted_exp(x[base + j] - peak, single) / total


@cuda.jit(cache=True)
def softmax_columns(x, y, outer, size, inner, log, single):
    """Softmax along the middle dim of x viewed as (outer, size, inner), inner > 1: one
    thread per (outer, inner) column, so neighbouring threads read neighbouring memory."""
    for col in range(cuda.grid(1), outer * inner, cuda.gridsize(1)):
        o = col // inner
        base = o * size * inner + (col - o * inner)
        peak = -INF
        for j in range(size):
            v = x[base + j * inner]
            if v > peak or v != v:
                peak = v
        total = 0.0
        for j in range(size):
            total += shifted_exp(x[base + j * inner] - peak, single)
        if log:
            log_total = safe_log(total)
            for j in range(size):
                y[base + j * inner] = (x[base + j * inner] - peak) - log_total
        else:
            for j in range(size):
                y[base + j * inner] = shifted_exp(x[base + j * inner] - peak, single) / total




@cuda.jit(cache=True)
def softmax_backward_rows(g, y, gx, n_rows, size, log, single):
    """Input gradient of softmax (log: log_softmax) of each contiguous row from the output
    gradient g and the output y: y * (g - sum(g * y)), or g - exp(y) * sum(g)."""
    part = cuda.shared.array(0, float64)
    tid = cuda.threadIdx.x
    step = cuda.blockDim.x
    for row in range(cuda.blockIdx.x, n_rows, cuda.gridDim.x):
        base = row * size
        total = 0.0
        for j in range(tid, size, step):
            total += g[base + j] if log else g[base + j] * y[base + j]
        total = block_sum(part, total)
        for j in range(tid, size, step):
            if log:
                gx[base + j] = g[base + j] - shifted_exp(y[base + j], single) * total
            else:
                gx[base + j] = y[base + j] * (g[base + j] - total)


@cuda.jit(cache=True)
def softmax_backward_columns(g, y, gx, outer, size, inner, log, single):
    """`softmax_backward_rows` along the middle dim of (outer, size, inner), inner > 1:
    one thread per column."""
    for col in range(cuda.grid(1), outer * inner, cuda.gridsize(1)):
        o = col // inner
        base = o * size * inner + (col - o * inner)
        total = 0.0
        for j in range(size):
            k = base + j * inner
            total += g[k] if log else g[k] * y[k]
        for j in range(size):
            k = base + j * inner
            if log:
                gx[k] = g[k] - shifted_exp(y[k], single) * total
            else:
                gx[k] = y[k] * (g[k] - total)
