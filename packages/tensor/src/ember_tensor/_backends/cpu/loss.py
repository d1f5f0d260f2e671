"""CPU negative log-likelihood loss and its backward: class-index targets, class weights,
ignore_index, N-d inputs.

Arrays in, arrays out: log-probabilities `x` in float32/float64 (half types arrive as
float32), int64 targets, an optional (C,) weight array; arguments already checked by
the op. Losses and weights accumulate in float64. One fancy-indexed gather (forward)
or scatter (backward) in NumPy: no loop of our own.
"""
import numpy as np

__all__ = ["nll_loss", "nll_loss_backward"]


def _rows(x, target):
    """(M, C) log-probabilities and (M,) targets with the class dim moved last."""
    if x.ndim == 1:
        return x[None, :], target.reshape(1)
    moved = np.moveaxis(x, 1, -1)
    return moved.reshape(-1, x.shape[1]), target.reshape(-1)


def _picked_weights(t, classes, weight, ignore_index):
    """(targets with ignored ones as class 0, float64 weight of each sample: 0 if ignored)."""
    valid = t != ignore_index
    bad = valid & ((t < 0) | (t >= classes))
    if bad.any():
        raise IndexError(f"Target {int(t[bad][0])} is out of bounds.")
    safe = np.where(valid, t, 0)
    w = np.ones(len(t)) if weight is None else weight.astype(np.float64)[safe]
    return safe, np.where(valid, w, 0.0)


def nll_loss(x, target, weight, reduction, ignore_index):
    """The NLL loss of log-probabilities `x` (C), (N, C) or (N, C, d1, ...) at class
    indices `target`: float64 per-sample losses shaped like the target for 'none', else
    a 0-d float64 array ('mean': weighted by `weight`, an optional (C,) array).

    >>> nll_loss(np.log(np.full((1, 2), 0.5)), np.array([1]), None, "mean", -100)
    array(0.69314718)
    """
    classes = x.shape[0] if x.ndim == 1 else x.shape[1]
    rows, t = _rows(x, target)
    safe, w = _picked_weights(t, classes, weight, ignore_index)
    losses = -rows[np.arange(len(t)), safe].astype(np.float64) * w if len(t) else np.zeros(0)
    # An ignored sample adds 0, even where its class-0 entry is infinite (as PyTorch).
    losses[t == ignore_index] = 0.0
    if reduction == "none":
        return losses.reshape(() if x.ndim == 1 else (x.shape[0],) + x.shape[2:])
    if reduction == "sum":
        return np.array(losses.sum())
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.array(losses.sum() / w.sum())


def nll_loss_backward(grad_output, x, target, weight, reduction, ignore_index):
    """d nll_loss / d x, in x's dtype and shape: -w[t] * grad at each sample's target
    class, zeros elsewhere."""
    classes = x.shape[0] if x.ndim == 1 else x.shape[1]
    rows, t = _rows(x, target)
    safe, w = _picked_weights(t, classes, weight, ignore_index)
    g = grad_output.astype(np.float64).reshape(-1)
    if reduction != "none":
        with np.errstate(divide="ignore", invalid="ignore"):  # no weight at all: inf or NaN, as PyTorch
            g = g[0] / w.sum() if reduction == "mean" else g[0]
    counted = np.flatnonzero(t != ignore_index)  # ignored samples keep a zero gradient
    grad_rows = np.zeros(rows.shape, x.dtype)  # mostly zeros: build it in the output dtype
    if len(counted):
        with np.errstate(invalid="ignore"):
            grad_rows[counted, safe[counted]] = (-w * g)[counted]
    if x.ndim == 1:
        return grad_rows[0]
    moved_shape = (x.shape[0],) + x.shape[2:] + (classes,)
    return np.ascontiguousarray(np.moveaxis(grad_rows.reshape(moved_shape), -1, 1))
