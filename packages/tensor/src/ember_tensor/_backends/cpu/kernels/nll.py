"""Numba loops of the negative log-likelihood loss: one pass over the samples picks each
target's log-probability and weight (forward), or writes each sample's gradient into its
target's column (backward), where the NumPy expression made a dozen small calls.

Serial and GIL-free: a loss reads one element a sample, too little to share out. The
bodies inline no function of another file, so Numba's on-disk cache (keyed on this file)
can never serve a stale kernel.
"""
from numba import njit

__all__ = ["pick", "scatter"]

_OPTIONS = dict(cache=True, nogil=True, error_model="numpy")


@njit(**_OPTIONS)
def pick(rows, target, weight, has_weight, ignore_index, losses, weights):
    """losses[i] = -rows[i, target[i]] * w and weights[i] = w (float64), w the target's
    class weight (1 without `has_weight`); 0 and 0 for an ignored sample. Returns the
    first sample whose target is out of range, or -1."""
    classes = rows.shape[1]
    for i in range(rows.shape[0]):
        t = target[i]
        if t == ignore_index:
            losses[i] = 0.0
            weights[i] = 0.0
            continue
        if t < 0 or t >= classes:
            return i
        w = weight[t] if has_weight else 1.0
        losses[i] = -(rows[i, t] * 1.0) * w
        weights[i] = w
    return -1


@njit(**_OPTIONS)
def scatter(target, weight, has_weight, ignore_index, grad, per_sample, out):
    """out[i, target[i]] = -w * g (w the target's class weight, g grad[i] when
    `per_sample`, else grad[0]) into a zeroed `out`; ignored samples keep zeros. Returns
    the first sample whose target is out of range, or -1."""
    classes = out.shape[1]
    for i in range(out.shape[0]):
        t = target[i]
        if t == ignore_index:
            continue
        if t < 0 or t >= classes:
            return i
        w = weight[t] if has_weight else 1.0
        g = grad[i] if per_sample else grad[0]
        out[i, t] = -w * g
    return -1
