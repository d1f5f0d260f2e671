"""Numba row kernels of the cross entropy of (N, C) logits at class-index targets:
log_softmax then nll_loss in one pass over each row, bit for bit the values of the two
(`cross_entropy_forward`/`_backward`).

The forward takes log_softmax's statistics of each row (its max, the log of its sum of
exps) with the row passes `kernels.softmax`'s log_softmax takes (`row_passes`: the same
compiled loops, so the same bits; each row's max taken in the previous row's exp pass),
and the target's log-probability, with nll_loss's weight and ignore_index on the way; the
backward writes log_softmax's gradient of nll_loss's one-hot gradient directly, the
log-probabilities recomputed as the forward computed them. Neither writes the (N, C)
log-probabilities: the statistics are an (N, 2) array (`stats[r] = max, log-sum-exp`).

Serial kernels that release the GIL, run over ranges of rows on several threads above
`softmax.PARALLEL_THRESHOLD` elements, compiled lazily for float32 and float64; their
disk cache is keyed by exp32.py and row_passes.py too, whose code they link
(`cache_keys.key_by_sources`).
"""
import math

import numpy as np
from numba import njit

from .. import threads
from . import exp32 as _exp32_module
from . import row_passes as _row_passes_module
from .cache_keys import key_by_sources
from .row_passes import exp as _exp
from .row_passes import row_max, sum_exp_and_max
from .softmax import PARALLEL_THRESHOLD

__all__ = ["cross_entropy_forward", "cross_entropy_backward"]

# Multiply-adds contracted, nothing reassociated (the sums' flags are row_passes').
_OPTIONS = dict(cache=True, nogil=True, error_model="numpy", fastmath={"contract"})


@njit(**_OPTIONS)
def _rows_cross_entropy(x, target, weight, has_weight, ignore_index, stats, losses, weights):
    n, classes = x.shape
    peak = row_max(x, 0) if n else x.dtype.type(0.0)
    for r in range(n):
        total, ahead_peak = sum_exp_and_max(x, r, peak, r + 1 if r + 1 < n else r)
        log_total = math.log(total)
        stats[r, 0] = peak
        stats[r, 1] = log_total
        t = target[r]
        if t == ignore_index:
            losses[r] = 0.0
            weights[r] = 0.0
        elif t < 0 or t >= classes:
            return r
        else:
            w = weight[t] if has_weight else 1.0
            losses[r] = -(((x[r, t] - peak) - log_total) * 1.0) * w
            weights[r] = w
        peak = ahead_peak
    return -1


@njit(**_OPTIONS)
def _rows_cross_entropy_backward(x, target, weight, has_weight, ignore_index, stats, grad, per_sample, gx):
    # With G = -w * g at the target (log_softmax's input gradient from nll_loss's):
    # gx = onehot * G - exp(log_softmax(x)) * G, the log-probabilities recomputed as the
    # forward computed them.
    classes = x.shape[1]
    for r in range(x.shape[0]):
        t = target[r]
        if t == ignore_index:
            for j in range(classes):
                gx[r, j] = 0.0
            continue
        if t < 0 or t >= classes:
            return r
        w = weight[t] if has_weight else 1.0
        g = grad[r] if per_sample else grad[0]
        G = x.dtype.type(-w * g)
        zero = x.dtype.type(0.0)
        peak, log_total = stats[r, 0], stats[r, 1]
        for j in range(classes):
            gx[r, j] = (G if j == t else zero) - _exp((x[r, j] - peak) - log_total) * G
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
    """(losses, weights: float64 (N,); stats: x2's dtype (N, 2), each row's max and
    log-sum-exp; the first sample whose target is out of range or -1) of C-contiguous
    (N, C) logits `x2` at int64 `target`, `weight` a float64 (C,) array read when
    `has_weight`."""
    n = x2.shape[0]
    stats = np.empty((n, 2), x2.dtype)
    losses, weights = np.empty(n), np.empty(n)
    bad = _checked_rows(_rows_cross_entropy, n, x2.size, lambda lo, hi: (
        x2[lo:hi], target[lo:hi], weight, has_weight, ignore_index, stats[lo:hi], losses[lo:hi], weights[lo:hi]))
    return losses, weights, stats, bad


def cross_entropy_backward(x2, target, weight, has_weight, ignore_index, stats, grad, per_sample):
    """(input gradient of C-contiguous (N, C) logits `x2`, the first sample whose target
    is out of range or -1), `stats` the forward's (N, 2) C-contiguous statistics, `grad`
    the float64 loss gradient: one per sample when `per_sample`, else grad[0] (already
    divided by the weight total for a mean)."""
    gx = np.empty_like(x2)
    bad = _checked_rows(_rows_cross_entropy_backward, x2.shape[0], x2.size, lambda lo, hi: (
        x2[lo:hi], target[lo:hi], weight, has_weight, ignore_index, stats[lo:hi],
        grad[lo:hi] if per_sample else grad, per_sample, gx[lo:hi]))
    return gx, bad


# Last, once every kernel is defined: they link exp32.py's and row_passes.py's code.
key_by_sources(globals().values(), [_exp32_module.__file__, _row_passes_module.__file__])
