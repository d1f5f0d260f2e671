"""Cross entropy as one dispatcher op, `cross_entropy_loss` (ATen's name and argument
order): log_softmax over the class dim then the fused nll_loss for class-index targets,
or the weighted sum of target probabilities times log-probabilities; label smoothing
mixes in the loss against the uniform distribution.

A composite (differentiated through log_softmax and nll_loss, whose kernels are fused),
and still one operator so that autocast's CPU list, which names cross_entropy_loss, runs
the whole loss in float32 as PyTorch does (log_softmax included). `ember_nn.functional.
cross_entropy` checks the legacy flags and calls it.
"""
from ..._dispatch import op
from ..elementwise import where
from .activation import log_softmax
from .loss import nll_loss
from .pointwise_loss import reduce_loss
from .sampling import embedding

__all__ = ["cross_entropy_loss"]


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
