"""The negative log-likelihood loss kernel (class-index targets, class weights,
ignore_index, N-d inputs) and its backward kernel.

cross_entropy is log_softmax followed by this kernel; the other losses are composites
of elementwise ops and reductions in `ember_nn.functional`. CUDA inputs run the device
kernels of `_backends.cuda.rows` after the same argument checks.
"""
import numpy as np

from ... import _dtype as D
from ..._dispatch import op
from ._common import from_array, to_array

__all__ = ["nll_loss", "nll_loss_backward", "REDUCTIONS"]

REDUCTIONS = ("none", "mean", "sum")


def _check(input, target, weight):
    if target._dtype not in (D.int64, D.uint8, D.int32):
        name = {"float32": "Float", "float64": "Double", "bool": "Bool"}.get(target._dtype.name, target._dtype.name)
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {name}")
    nd = input.dim()
    if nd < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {nd})")
    if nd == 1:
        if target.dim() > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    elif nd == 2:
        if target.dim() != 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if target.shape[0] != input.shape[0]:
            raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
                             f"({target.shape[0]}).")
    else:
        if target.dim() != nd - 1:
            raise RuntimeError("only batches of spatial targets supported (3D tensors) but got targets of "
                               f"dimension: {target.dim()}")
        if target.shape[0] != input.shape[0]:
            raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
                             f"({target.shape[0]}).")
        expected = [input.shape[0]] + list(input.shape[2:])
        if list(target.shape) != expected:
            raise RuntimeError(f"Expected target size {expected}, got {list(target.shape)}")
    classes = input.shape[0] if nd == 1 else input.shape[1]
    if weight is not None and weight.numel() != classes:
        raise RuntimeError(f"weight tensor should be defined either for all {classes} classes or no "
                           f"classes but got weight tensor of shape: {list(weight.shape)}")
    return classes


def _rows(input_array, target_array):
    """(M, C) log-probabilities and (M,) targets with the class dim moved last."""
    if input_array.ndim == 1:
        return input_array[None, :], target_array.reshape(1)
    moved = np.moveaxis(input_array, 1, -1)
    return moved.reshape(-1, input_array.shape[1]), target_array.reshape(-1)


def _picked_weights(t, classes, weight, ignore_index):
    valid = t != ignore_index
    bad = valid & ((t < 0) | (t >= classes))
    if bad.any():
        raise IndexError(f"Target {int(t[bad][0])} is out of bounds.")
    safe = np.where(valid, t, 0)
    w = np.ones(len(t)) if weight is None else to_array(weight).astype(np.float64)[safe]
    return safe, np.where(valid, w, 0.0)


@op()
def nll_loss(input, target, weight=None, reduction="mean", ignore_index=-100):
    """Negative log-likelihood of class-index `target` under log-probabilities `input`
    (C), (N, C) or (N, C, d1, ...)."""
    if reduction not in REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    classes = _check(input, target, weight)
    if input._device.type == "cuda":
        from ..._backends.cuda import rows as _cuda_rows
        return _cuda_rows.nll_loss(input, target, weight, reduction, ignore_index)
    x = to_array(input)
    rows, t = _rows(x, to_array(target, np.int64))
    safe, w = _picked_weights(t, classes, weight, ignore_index)
    losses = -rows[np.arange(len(t)), safe].astype(np.float64) * w if len(t) else np.zeros(0)
    # An ignored sample adds 0, even where its class-0 entry is infinite (as PyTorch).
    losses[t == ignore_index] = 0.0
    if reduction == "none":
        shape = () if input.dim() == 1 else (input.shape[0],) + tuple(input.shape[2:])
        out = losses.reshape(shape)
    elif reduction == "sum":
        out = np.array(losses.sum())
    else:
        with np.errstate(invalid="ignore", divide="ignore"):
            out = np.array(losses.sum() / w.sum())
    return from_array(np.asarray(out), input._dtype, input._device)


@op()
def nll_loss_backward(grad_output, input, target, weight=None, reduction="mean", ignore_index=-100):
    """Gradient of `nll_loss` w.r.t. its input: -weight * grad at each target class."""
    if input._device.type == "cuda":
        from ..._backends.cuda import rows as _cuda_rows
        return _cuda_rows.nll_loss_backward(grad_output, input, target, weight, reduction, ignore_index)
    x = to_array(input)
    classes = x.shape[0] if x.ndim == 1 else x.shape[1]
    rows, t = _rows(x, to_array(target, np.int64))
    safe, w = _picked_weights(t, classes, weight, ignore_index)
    g = to_array(grad_output).astype(np.float64).reshape(-1)
    if reduction != "none":
        with np.errstate(divide="ignore", invalid="ignore"):  # no weight at all: inf or NaN, as PyTorch
            g = g[0] / w.sum() if reduction == "mean" else g[0]
    counted = np.flatnonzero(t != ignore_index)  # ignored samples keep a zero gradient
    grad_rows = np.zeros(rows.shape, x.dtype)  # mostly zeros: build it in the output dtype
    if len(counted):
        with np.errstate(invalid="ignore"):
            grad_rows[counted, safe[counted]] = (-w * g)[counted]
    if x.ndim == 1:
        grad = grad_rows[0]
    else:
        moved_shape = (x.shape[0],) + x.shape[2:] + (classes,)
        grad = np.moveaxis(grad_rows.reshape(moved_shape), -1, 1)
    return from_array(grad, grad_output._dtype, grad_output._device)
