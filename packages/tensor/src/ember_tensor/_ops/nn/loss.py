"""The negative log-likelihood loss (class-index targets, class weights, ignore_index,
N-d inputs) and its backward.

Device-free: the ops check their arguments with PyTorch's errors, then call their
device's backend (`_backends.<device>.loss`) on the operands in their compute dtypes.
cross_entropy is log_softmax followed by this loss; the other losses are composite ops
(`pointwise_loss`, `margin_loss`).
"""
import numpy as np

from ... import _backends
from ... import _dtype as D
from ..._dispatch import op
from ._common import array_of, tensor_of

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


def _operands(input, target, weight):
    """The arrays the backend takes: input and weight in their compute dtypes, int64 targets."""
    return array_of(input), array_of(target, np.int64), None if weight is None else array_of(weight)


@op()
def nll_loss(input, target, weight=None, reduction="mean", ignore_index=-100):
    """Negative log-likelihood of class-index `target` under log-probabilities `input`
    (C), (N, C) or (N, C, d1, ...)."""
    if reduction not in REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    _check(input, target, weight)
    losses = _backends.get(input._device).loss.nll_loss(*_operands(input, target, weight), reduction, ignore_index)
    return tensor_of(losses, input._dtype, input._device)


@op()
def nll_loss_backward(grad_output, input, target, weight=None, reduction="mean", ignore_index=-100):
    """Gradient of `nll_loss` w.r.t. its input: -weight * grad at each target class."""
    grad = _backends.get(input._device).loss.nll_loss_backward(
        array_of(grad_output), *_operands(input, target, weight), reduction, ignore_index)
    return tensor_of(grad, grad_output._dtype, grad_output._device)
