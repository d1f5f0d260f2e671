"""Cross entropy as one dispatcher op, `cross_entropy_loss` (ATen's name and argument
order): log_softmax over the class dim then the fused nll_loss for class-index targets,
or the weighted sum of target probabilities times log-probabilities; label smoothing
mixes in the loss against the uniform distribution.

A composite (differentiated through log_softmax and nll_loss, whose kernels are fused),
and still one operator so that autocast's CPU list, which names cross_entropy_loss, runs
the whole loss in float32 as PyTorch does (log_softmax included). `ember_nn.functional.
cross_entropy` checks the legacy flags and calls it.

The common case, (N, C) float32/float64 logits at class indices without label smoothing,
is one op of its own, `cross_entropy_rows`: the backend computes each row's
log-sum-exp and the target's loss in the passes that read the row, and the backward
writes the input gradient in one pass, never materialising the (N, C) log-probabilities
(bit for bit log_softmax's and nll_loss's values; its rule holds it).
"""
from ... import _backends
from ... import _dtype as D
from ..._dispatch import op
from ..elementwise import where
from ._common import array_of, tensor_of
from .activation import log_softmax
from .loss import _check, _operands, nll_loss
from .pointwise_loss import reduce_loss
from .sampling import embedding

__all__ = ["cross_entropy_loss", "cross_entropy_rows", "cross_entropy_rows_backward"]


@op()
def cross_entropy_rows(input, target, weight=None, reduction="mean", ignore_index=-100):
    """log_softmax of (N, C) logits `input` along dim 1, then nll_loss at class indices
    `target`, in one op: returns (loss, saved), `saved` being what the backward needs of
    the forward (backend-specific)."""
    _check(input, target, weight)
    loss, saved = _backends.get(input._device).loss.cross_entropy(*_operands(input, target, weight), reduction,
                                                                   ignore_index)
    return tensor_of(loss, input._dtype, input._device), tensor_of(saved, input._dtype, input._device)


@op()
def cross_entropy_rows_backward(grad_output, input, target, weight, saved, reduction="mean", ignore_index=-100):
    """The input gradient of `cross_entropy_rows` (`saved`: its second result)."""
    grad = _backends.get(input._device).loss.cross_entropy_backward(
        array_of(grad_output), *_operands(input, target, weight), saved._data, reduction, ignore_index)
    return tensor_of(grad, input._dtype, input._device)


def _rows_case(input, target, label_smoothing):
    """Whether `cross_entropy_rows` computes this loss: (N, C) float32/float64 logits at
    class indices of a dtype nll_loss takes, no label smoothing."""
    return (label_smoothing == 0.0 and input.dim() == 2 and input._dtype in (D.float32, D.float64)
            and target._dtype in (D.int64, D.int32, D.uint8))


@op(composite=True)
def cross_entropy_loss(input, target, weight=None, reduction="mean", ignore_index=-100, label_smoothing=0.0):
    """The cross entropy of `input` logits (C), (N, C) or (N, C, d1, ...) against class
    indices or class probabilities `target`.

    >>> import ember_tensor as torch
    >>> from ember_tensor import nn_ops
    >>> round(nn_ops.cross_entropy_loss(torch.zeros(1, 4), torch.tensor([2])).item(), 4)
    1.3863
    """
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    if _rows_case(input, target, label_smoothing):
        return cross_entropy_rows(input, target, weight, reduction, ignore_index)[0]
    class_dim = 0 if input.dim() == 1 else 1
    logp = log_softmax(input, class_dim)
    if target.dtype.is_floating_point:
        if ignore_index >= 0:  # PyTorch's check: only the default (negative) value passes
            raise RuntimeError("ignore_index is not supported for floating point target")
        return _against_probabilities(input, logp, target, weight, reduction, label_smoothing, class_dim)
    loss = nll_loss(logp, target, weight, reduction, ignore_index)
    if label_smoothing == 0.0:
        return loss
    classes = input.shape[class_dim]
    w = 1.0 if weight is None else weight.reshape((classes,) + (1,) * (input.dim() - class_dim - 1))
    smooth = -(logp * w).sum(class_dim)
    keep = target != ignore_index
    smooth = where(keep, smooth, 0.0)
    if reduction == "mean":
        if weight is None:
            smooth = smooth.sum() / keep.sum()
        else:
            picked = embedding(weight.reshape(-1, 1), where(keep, target, 0)).reshape(target.shape)
            smooth = smooth.sum() / (picked * keep).sum()
    elif reduction == "sum":
        smooth = smooth.sum()
    return loss * (1 - label_smoothing) + smooth * (label_smoothing / classes)


def _against_probabilities(input, logp, target, weight, reduction, label_smoothing, class_dim):
    if tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected target size {list(input.shape)}, got {list(target.shape)}")
    classes = input.shape[class_dim]
    if label_smoothing > 0:
        target = target * (1 - label_smoothing) + label_smoothing / classes
    terms = logp * target
    if weight is not None:
        terms = terms * weight.reshape((classes,) + (1,) * (input.dim() - class_dim - 1))
    loss = -terms.sum(class_dim)
    if reduction == "mean":
        batch = input.numel() // classes if input.dim() > 1 else 1
        return loss.sum() / batch
    return reduce_loss(loss, reduction)
