"""Numba CUDA kernels of the negative log-likelihood loss, forward and backward.

Launched by `_backends.cuda.loss` on flat C-contiguous arrays: log-probabilities in
float32/float64, int64 targets, float64 class weights; per-sample losses and weights
accumulate in float64. Under the simulator device code runs as Python (1.0 / 0.0
raises there), hence `divide`.
"""
import math

from numba import cuda, float64

from .rows import INF, NAN, block_sum

__all__ = ["nll_forward", "nll_reduce", "nll_total_weight", "nll_backward"]


@cuda.jit(device=True)
def divide(a, b):
    """a / b with IEEE's answers for b == 0 (Python's division raises in the simulator)."""
    if b != 0.0:
        return a / b
    if a != a or a == 0.0:
        return NAN
    return math.copysign(INF, a) * math.copysign(1.0, b)


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
    part = cuda.shared.array(0, float64)  # dynamic: blockDim.x float64s (see cuda/rows.py)
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
    part = cuda.shared.array(0, float64)  # dynamic: blockDim.x float64s (see cuda/rows.py)
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
