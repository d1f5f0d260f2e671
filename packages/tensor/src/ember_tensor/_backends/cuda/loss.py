"""The CUDA negative log-likelihood loss and its backward: the same functions as
`_backends.cpu.loss` over device arrays. The cross entropy of rows of logits is
log_softmax (`softmax`'s row kernels) then this loss, its `saved` the log-probabilities.

The kernels (`kernels.loss`) gather each sample's log-probability at its target class
and merge the losses and weights in float64. Nothing goes through the host except the
bounds check, which reads one int64 (the first out-of-range sample, if any) to raise
PyTorch's "Target N is out of bounds." as the CPU does (PyTorch asserts on the device
instead).
"""
import numpy as np

from ..._runtime.determinism import alert_not_deterministic
from . import storage
from .kernels import loss as K
from .rows import flat_operand, launch_flat, launch_rows, optional_operand, shaped
from .softmax import softmax, softmax_backward

__all__ = ["nll_loss", "nll_loss_backward", "cross_entropy", "cross_entropy_backward"]


def _operands(x, target, weight):
    """(flat x, flat int64 targets, float64 weights, has_weight, classes, inner, first_bad)."""
    flat_x = flat_operand(x)
    t = flat_operand(target, np.int64)
    classes = x.shape[0] if x.ndim == 1 else x.shape[1]
    inner = flat_x.size // (x.shape[0] * classes) if x.ndim > 2 and flat_x.size else 1
    first_bad = storage.empty((1,), np.int64)
    storage.fill_(first_bad, t.size)
    w, has_weight = optional_operand(weight, first_bad, np.float64)  # weights read as float64
    return flat_x, t, w, has_weight, classes, inner, first_bad


def _raise_if_out_of_bounds(t, first_bad):
    # One int64 comes back (and, on the error path, the offending target).
    at = int(storage.to_numpy(first_bad)[0])
    if at < t.size:
        value = int(storage.to_numpy(t[at:at + 1])[0])
        raise IndexError(f"Target {value} is out of bounds.")


def nll_loss(x, target, weight, reduction, ignore_index):
    """The NLL loss of log-probabilities `x` (C), (N, C) or (N, C, d1, ...) at class
    indices `target`: float64 per-sample losses shaped like the target for 'none', else
    a 0-d array of x's dtype ('mean': weighted by `weight`, an optional (C,) array)."""
    if x.ndim > 2 and reduction != "none":
        # PyTorch's N-d loss (nll_loss2d) sums with atomics; its (C)/(N, C) one does not.
        alert_not_deterministic("nll_loss2d_forward_out_cuda_template")
    flat_x, t, w, has_weight, classes, inner, first_bad = _operands(x, target, weight)
    losses = storage.empty((t.size,), np.float64)
    weights = storage.empty((t.size,), np.float64)
    launch_flat(K.nll_forward, t.size, flat_x, t, w, has_weight, classes, inner, ignore_index, losses,
                weights, first_bad)
    _raise_if_out_of_bounds(t, first_bad)
    if reduction == "none":
        return shaped(losses, () if x.ndim == 1 else (x.shape[0],) + tuple(x.shape[2:]))
    out = storage.empty((1,), flat_x.dtype)  # the kernel rounds its float64 result once, on the store
    launch_rows(K.nll_reduce, 1, t.size, losses, weights, reduction == "mean", out)
    return shaped(out, ())


def nll_loss_backward(grad_output, x, target, weight, reduction, ignore_index):
    """d nll_loss / d x, in x's dtype and shape: -w[t] * grad at each sample's target
    class, zeros elsewhere."""
    flat_x, t, w, has_weight, classes, inner, first_bad = _operands(x, target, weight)
    total_weight = storage.empty((1,), np.float64)
    if reduction == "mean":
        launch_rows(K.nll_total_weight, 1, t.size, t, w, has_weight, classes, ignore_index,
                    total_weight, first_bad)
    grad = storage.empty((flat_x.size,), flat_x.dtype)
    storage.fill_(grad, 0)
    g = flat_operand(grad_output, np.float64)
    launch_flat(K.nll_backward, t.size, t, w, has_weight, classes, inner, ignore_index, g,
                reduction == "none", total_weight, reduction == "mean", grad, first_bad)
    _raise_if_out_of_bounds(t, first_bad)
    return shaped(grad, x.shape)


def cross_entropy(x, target, weight, reduction, ignore_index):
    """The cross entropy of (N, C) logits `x` at int64 class indices `target`: (the loss
    as `nll_loss` returns it, `saved`), `saved` being what `cross_entropy_backward` needs
    of this forward (here the log-probabilities)."""
    logp = softmax(x, 1, True)
    return nll_loss(logp, target, weight, reduction, ignore_index), logp


def cross_entropy_backward(grad_output, x, target, weight, saved, reduction, ignore_index):
    """d cross_entropy / d x, in x's dtype (`saved`: `cross_entropy`'s)."""
    return softmax_backward(nll_loss_backward(grad_output, saved, target, weight, reduction, ignore_index),
                            saved, 1, True)
