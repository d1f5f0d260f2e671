"""CPU negative log-likelihood loss and its backward: class-index targets, class weights,
ignore_index, N-d inputs; and the cross entropy of rows of logits (log_softmax then
nll_loss in one pass of `kernels.cross_entropy`, bit for bit their values).

Arrays in, arrays out: log-probabilities `x` in float32/float64 (half types arrive as
float32), int64 targets, an optional (C,) weight array; arguments already checked by
the op. Losses and weights accumulate in float64. One Numba pass over the samples
(`kernels.nll`) picks the targets' entries (forward) or writes their gradients
(backward); the reductions are NumPy's sums.
"""
import numpy as np

from ..lazy import lazy

__all__ = ["nll_loss", "nll_loss_backward", "cross_entropy", "cross_entropy_backward"]

NLL = lazy("cpu.kernels.nll")  # Numba loads on first use
ROWS = lazy("cpu.kernels.cross_entropy")


def _rows(x, target):
    """(M, C) C-contiguous log-probabilities and (M,) targets, the class dim moved last."""
    if x.ndim == 1:
        return np.ascontiguousarray(x[None, :]), target.reshape(1)
    moved = np.moveaxis(x, 1, -1)
    return np.ascontiguousarray(moved.reshape(-1, x.shape[1])), np.ascontiguousarray(target.reshape(-1))


_NO_WEIGHT = np.ones(1)  # never written: a placeholder the kernels do not read


def _weights(weight):
    """(float64 class weights, whether there are any): the kernels' weight arguments."""
    if weight is None:
        return _NO_WEIGHT, False
    return np.ascontiguousarray(weight, np.float64).reshape(-1), True


def _out_of_bounds(t, bad):
    if bad >= 0:
        raise IndexError(f"Target {int(t[bad])} is out of bounds.")


def _picked(rows, t, weight, ignore_index):
    """(float64 loss, float64 weight) of each sample: 0 and 0 if it is ignored (even where
    its class-0 entry is infinite, as PyTorch)."""
    losses, weights = np.empty(len(t)), np.empty(len(t))
    _out_of_bounds(t, NLL.pick(rows, t, *_weights(weight), ignore_index, losses, weights))
    return losses, weights


def _reduced(losses, weights, reduction, shape):
    """nll_loss's reduction of float64 per-sample `losses` with their `weights`."""
    if reduction == "none":
        return losses.reshape(shape)
    if reduction == "sum":
        return np.array(losses.sum())
    total_weight = weights.sum()
    if 0.0 < abs(total_weight) < np.inf:  # NumPy's errstate only when needed: ~1 us, a tenth of a small loss
        return np.array(losses.sum() / total_weight)
    with np.errstate(invalid="ignore", divide="ignore"):  # no weight at all (inf or NaN, as PyTorch), inf, NaN
        return np.array(losses.sum() / total_weight)


def nll_loss(x, target, weight, reduction, ignore_index):
    """The NLL loss of log-probabilities `x` (C), (N, C) or (N, C, d1, ...) at class
    indices `target`: float64 per-sample losses shaped like the target for 'none', else
    a 0-d float64 array ('mean': weighted by `weight`, an optional (C,) array).

    >>> nll_loss(np.log(np.full((1, 2), 0.5)), np.array([1]), None, "mean", -100)
    array(0.69314718)
    """
    rows, t = _rows(x, target)
    losses, w = _picked(rows, t, weight, ignore_index)
    return _reduced(losses, w, reduction, () if x.ndim == 1 else (x.shape[0],) + x.shape[2:])


def nll_loss_backward(grad_output, x, target, weight, reduction, ignore_index):
    """d nll_loss / d x, in x's dtype and shape: -w[t] * grad at each sample's target
    class, zeros elsewhere."""
    classes = x.shape[0] if x.ndim == 1 else x.shape[1]
    rows, t = _rows(x, target)
    g = np.ascontiguousarray(grad_output, np.float64).reshape(-1)
    if reduction != "none":
        g = g[:1]
        if reduction == "mean":
            with np.errstate(divide="ignore", invalid="ignore"):  # no weight at all: inf or NaN, as PyTorch
                g = g / _picked(rows, t, weight, ignore_index)[1].sum()
    grad_rows = np.zeros(rows.shape, x.dtype)  # mostly zeros: build it in the output dtype
    _out_of_bounds(t, NLL.scatter(t, *_weights(weight), ignore_index, g, reduction == "none", grad_rows))
    if x.ndim == 1:
        return grad_rows[0]
    moved_shape = (x.shape[0],) + x.shape[2:] + (classes,)
    return np.ascontiguousarray(np.moveaxis(grad_rows.reshape(moved_shape), -1, 1))


def cross_entropy(x, target, weight, reduction, ignore_index):
    """The cross entropy of (N, C) logits `x` (float32/float64) at int64 class indices
    `target`: (the loss as `nll_loss` returns it, `saved`), `saved` being what
    `cross_entropy_backward` needs of this forward (here each row's max and log-sum-exp,
    an (N, 2) array of x's dtype).

    >>> cross_entropy(np.zeros((1, 2)), np.array([1]), None, "mean", -100)[0]
    array(0.69314718)
    """
    x2 = np.ascontiguousarray(x)
    t = np.ascontiguousarray(target, np.int64).reshape(-1)
    losses, weights, stats, bad = ROWS.cross_entropy_forward(x2, t, *_weights(weight), ignore_index)
    _out_of_bounds(t, bad)
    return _reduced(losses, weights, reduction, (x.shape[0],)), stats


def cross_entropy_backward(grad_output, x, target, weight, saved, reduction, ignore_index):
    """d cross_entropy / d x, in x's dtype: softmax(x) scaled by each sample's -w * g,
    minus it at the target (`saved`: `cross_entropy`'s)."""
    x2 = np.ascontiguousarray(x)
    t = np.ascontiguousarray(target, np.int64).reshape(-1)
    g = np.ascontiguousarray(grad_output, np.float64).reshape(-1)
    if reduction != "none":
        g = g[:1]
        if reduction == "mean":
            # nll_loss's divisor: the sum of the samples' weights (0 for an ignored one).
            valid = t != ignore_index
            weights = valid.astype(np.float64) if weight is None else np.where(
                valid, np.asarray(weight, np.float64)[np.where(valid, t, 0)], 0.0)
            with np.errstate(divide="ignore", invalid="ignore"):  # no weight at all: inf or NaN, as PyTorch
                g = g / weights.sum()
    gx, bad = ROWS.cross_entropy_backward(x2, t, *_weights(weight), ignore_index, np.ascontiguousarray(saved), g,
                                          reduction == "none")
    _out_of_bounds(t, bad)
    return gx
