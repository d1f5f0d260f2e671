"""Numba CUDA kernels of the nn row ops softmax and the NLL loss, and the block-wide
merges that the normalisation kernels (`_backends.cuda.kernels.normalization`) share.

Launched by `ember_tensor._backends.cuda.rows`, which brings every operand to a C-contiguous
1-d device array in its compute dtype (float32 or float64) first, so each kernel sees
flat buffers and a few sizes. Two launch shapes:

  row kernels      one thread block per row (blocks stride over the rows); the threads
                   fold strided shares of the row and merge them through a float64
                   shared-memory tree (`block_sum`, `block_max`). The block size is
                   chosen per launch (a power of two up to THREADS), so short rows do
                   not leave most of a block idle.
  flat kernels     grid-stride loops, one element (or sample, or channel) per step.

The merge scratch is dynamic shared memory (`cuda.shared.array(0, ...)`, sized by the
launch): the simulator's static shared arrays are looked up per thread in a dict that
two threads can both find empty, leaving them with different arrays (a flaky merge).

Statistics accumulate in float64, as the CPU kernels do. Under Numba's simulator
device code runs as Python (`math.log(0.0)` raises there, 1.0 / 0.0 too), so the
few places that could meet a zero or a NaN test for it explicitly: the results are
the same on both.
"""
import math

import numpy as np
from numba import cuda, float64

from .loops import SIMULATOR

__all__ = ["THREADS", "block_sum", "block_max", "inverse_sqrt", "softmax_rows", "softmax_columns",
           "nll_forward", "nll_reduce", "nll_total_weight", "nll_backward"]

# The largest block of a row kernel (a power of two: the tree merge halves it). The
# simulator runs a Python thread per CUDA thread: a tiny block that still merges.
THREADS = 4 if SIMULATOR else 256
INF = math.inf
NAN = math.nan


# --- block-wide merges ---------------------------------------------------------------------

@cuda.jit(device=True)
def block_sum(part, value):
    """The sum of `value` over the block's threads, returned to every thread."""
    tid = cuda.threadIdx.x
    part[tid] = value
    cuda.syncthreads()
    width = cuda.blockDim.x // 2
    while width > 0:
        if tid < width:
            part[tid] += part[tid + width]
        cuda.syncthreads()
        width //= 2
    total = part[0]
    cuda.syncthreads()  # `part` is written again by the next merge
    return total


@cuda.jit(device=True)
def block_max(part, value):
    """The largest `value` over the block's threads (NaN wins), returned to every thread."""
    tid = cuda.threadIdx.x
    part[tid] = value
    cuda.syncthreads()
    width = cuda.blockDim.x // 2
    while width > 0:
        if tid < width:
            other = part[tid + width]
            if other > part[tid] or other != other:
                part[tid] = other
        cuda.syncthreads()
        width //= 2
    peak = part[0]
    cuda.syncthreads()
    return peak


@cuda.jit(device=True)
def safe_log(v):
    if v > 0.0:
        return math.log(v)
    if v == 0.0:
        return -INF
    return NAN


@cuda.jit(device=True)
def inverse_sqrt(v):
    """1 / sqrt(v): inf at 0, NaN below (CUDA's answers, without Python's exceptions)."""
    if v > 0.0:
        return 1.0 / math.sqrt(v)
    if v == 0.0:
        return INF
    return NAN


@cuda.jit(device=True)
def divide(a, b):
    """a / b with IEEE's answers for b == 0 (Python's division raises in the simulator)."""
    if b != 0.0:
        return a / b
    if a != a or a == 0.0:
        return NAN
    return math.copysign(INF, a) * math.copysign(1.0, b)


@cuda.jit(device=True)
def shifted_exp(v, single):
    # float32 inputs take float32's exp, which is far cheaper than float64's on most GPUs.
    if single:
        return math.exp(np.float32(v))
    return math.exp(v)


# --- softmax -------------------------------------------------------------------------------

@cuda.jit(cache=True)
def softmax_rows(x, y, n_rows, size, log, single):
    """Softmax (log: log_softmax) of each contiguous row of `size` elements of x into y."""
    part = cuda.shared.array(0, float64)  # dynamic: blockDim.x float64s (see _cuda_rows)
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


# --- negative log-likelihood ---------------------------------------------------------------
# Sample m of an (N, C, inner) input with targets (N * inner,) reads x[(n*C + t)*inner + s].
# A target outside [0, C) (and not ignore_index) lowers first_bad[0] to its sample index.

@cuda.jit(device=True)
def _target_weight(target, weight, has_weight, classes, ignore_index, m, first_bad):
    """(class, weight) of sample m: class -1 and weight 0 when it is skipped."""
    t = target[m]
    if t == ignore_index:
        return -1, 0.0
    if t < 0 or t >= classes:
        cuda.atomic.min(first_bad, 0, m)
        return -1, 0.0
    if has_weight:
        return t, weight[t]
    return t, 1.0


@cuda.jit(cache=True)
def nll_forward(x, target, weight, has_weight, classes, inner, ignore_index, losses, weights,
                first_bad):
    """Per-sample loss -w[t] * x[.., t, ..] and weight w[t] (0 for ignored samples)."""
    for m in range(cuda.grid(1), target.size, cuda.gridsize(1)):
        t, w = _target_weight(target, weight, has_weight, classes, ignore_index, m, first_bad)
        weights[m] = w
        if t < 0:
            losses[m] = 0.0
        else:
            n = m // inner
            losses[m] = -x[(n * classes + t) * inner + (m - n * inner)] * w


@cuda.jit(cache=True)
def nll_reduce(losses, weights, mean, out):
    """out[0] = sum(losses) (mean: divided by sum(weights)); one block."""
    part = cuda.shared.array(0, float64)  # dynamic: blockDim.x float64s (see _cuda_rows)
    tid = cuda.threadIdx.x
    total = 0.0
    weight_total = 0.0
    for m in range(tid, losses.size, cuda.blockDim.x):
        total += losses[m]
        weight_total += weights[m]
    total = block_sum(part, total)
    weight_total = block_sum(part, weight_total)
    if tid == 0:
        out[0] = divide(total, weight_total) if mean else total


@cuda.jit(cache=True)
def nll_total_weight(target, weight, has_weight, classes, ignore_index, out, first_bad):
    """out[0] = the summed weight of the samples that count (one block)."""
    part = cuda.shared.array(0, float64)  # dynamic: blockDim.x float64s (see _cuda_rows)
    tid = cuda.threadIdx.x
    total = 0.0
    for m in range(tid, target.size, cuda.blockDim.x):
        _, w = _target_weight(target, weight, has_weight, classes, ignore_index, m, first_bad)
        total += w
    total = block_sum(part, total)
    if tid == 0:
        out[0] = total


@cuda.jit(cache=True)
def nll_backward(target, weight, has_weight, classes, inner, ignore_index, grad_out, per_sample,
                 total_weight, mean, grad, first_bad):
    """grad[.., t, ..] = -w[t] * g for each counted sample into a zero-filled grad (mean:
    g / sum of weights, inf or NaN when that is 0, as PyTorch)."""
    for m in range(cuda.grid(1), target.size, cuda.gridsize(1)):
        t, w = _target_weight(target, weight, has_weight, classes, ignore_index, m, first_bad)
        if t < 0:
            continue
        g = grad_out[m] if per_sample else grad_out[0]
        if mean:
            g = divide(g, total_weight[0])
        n = m // inner
        grad[(n * classes + t) * inner + (m - n * inner)] = -w * g
