"""Loss functions with PyTorch's `reduction`, legacy size_average/reduce flags, and shape
checks. nll_loss runs a fused kernel; cross_entropy (log_softmax + nll_loss) and the
losses PyTorch implements as ATen ops (mse_loss, l1_loss, kl_div, ...) are ember-tensor's
composite loss ops (`nn_ops`), one dispatcher op each, so that autocast's op lists see
them; the rest (gaussian_nll_loss, multilabel_soft_margin_loss, ...) are composites here,
as they are Python in PyTorch."""
import warnings

import ember_tensor as E
from ember_tensor import nn_ops as K

from ._util import legacy_reduction

__all__ = ["l1_loss", "mse_loss", "nll_loss", "cross_entropy", "linear_cross_entropy", "binary_cross_entropy",
           "binary_cross_entropy_with_logits", "poisson_nll_loss", "gaussian_nll_loss", "kl_div", "huber_loss",
           "smooth_l1_loss", "soft_margin_loss", "multilabel_margin_loss", "multilabel_soft_margin_loss",
           "multi_margin_loss", "hinge_embedding_loss", "cosine_embedding_loss", "margin_ranking_loss",
           "triplet_margin_loss", "triplet_margin_with_distance_loss"]


def _check_reduction(reduction):
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _warn_broadcast(input, target, name):
    if tuple(input.shape) != tuple(target.shape):
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size "
                      f"({input.shape}). This will likely lead to incorrect results due to broadcasting. "
                      "Please ensure they have the same size.", stacklevel=3)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean absolute error |x - y|."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    _warn_broadcast(input, target, "l1_loss")
    return K.l1_loss(input, target, reduction, weight)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean squared error (x - y)^2."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    _warn_broadcast(input, target, "mse_loss")
    return K.mse_loss(input, target, reduction, weight)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    """Negative log-likelihood of class indices under log-probabilities (C), (N, C) or (N, C, d1...)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    return K.nll_loss(input, target, weight, reduction, ignore_index)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """log_softmax over the class dim (1, or 0 for unbatched input), then nll_loss; targets
    are class indices or class probabilities; optional label smoothing.

    >>> import ember_tensor as torch
    >>> round(cross_entropy(torch.zeros(1, 4), torch.tensor([2])).item(), 4)
    1.3863
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    return K.cross_entropy_loss(input, target, weight, reduction, ignore_index, label_smoothing)


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None, reduction="mean",
                         ignore_index=None, label_smoothing=0.0, options=None):
    """cross_entropy(linear(input, linear_weight, linear_bias), target, ...). `options`
    (PyTorch's chunking hints) is accepted and ignored: ember computes the logits whole."""
    from ._conv import linear
    logits = linear(input, linear_weight, linear_bias)
    # ignore_index=None ignores nothing; no class index is below -2**62.
    ignore = -(2 ** 62) if ignore_index is None else ignore_index
    return cross_entropy(logits, target, weight, None, ignore, None, reduction, label_smoothing)


def _check_same_size(input, target, what="different to"):
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({target.shape}) that is {what} the input size ({input.shape}) "
                         "is deprecated. Please ensure they have the same size.")


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """-(y log x + (1 - y) log(1 - x)), logs clamped at -100 as PyTorch does."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    _check_same_size(input, target)
    return K.binary_cross_entropy(input, target, weight, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    """binary_cross_entropy(sigmoid(x), y) computed stably from the logits x."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    return K.binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    """Negative log-likelihood of a Poisson target: exp(x) - y x (log_input) or x - y log(x + eps)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    return K.poisson_nll_loss(input, target, log_input, full, eps, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """0.5 * (log(max(var, eps)) + (x - y)^2 / max(var, eps)) (+ const when `full`)."""
    _check_reduction(reduction)
    if not isinstance(var, E.Tensor):
        var = E.full_like(input, float(var))
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif tuple(input.shape[:-1]) == tuple(var.shape[:-1]) and var.shape[-1] == 1:
            pass
        else:
            raise ValueError("var is of incorrect size")
    if bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    var = var.clamp(min=eps)
    diff = input - target
    loss = 0.5 * (var.log() + diff * diff / var)
    if full:
        loss = loss + 0.5 * 1.8378770664093453  # log(2 pi)
    return K.reduce_loss(loss, reduction)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """Kullback-Leibler divergence of `target` from log-probabilities `input`."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    if reduction not in ("none", "mean", "sum", "batchmean"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return K.kl_div(input, target, reduction, log_target=log_target)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta)."""
    _check_reduction(reduction)
    _warn_broadcast(input, target, "huber_loss")
    return K.huber_loss(input, target, reduction, delta, weight)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    _warn_broadcast(input, target, "smooth_l1_loss")
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    return K.smooth_l1_loss(input, target, reduction, beta)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """log(1 + exp(-y x)) for targets y in {-1, 1}."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    return K.soft_margin_loss(input, target, reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """Per-class binary logistic loss averaged over classes."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    log_sig = input.clamp(max=0) - (-input.abs()).exp().log1p()
    log_sig_neg = (-input).clamp(max=0) - (-input.abs()).exp().log1p()
    loss = -(target * log_sig + (1 - target) * log_sig_neg)
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(-1) / input.shape[-1]
    return K.reduce_loss(loss, reduction)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """sum over targets j and non-targets i of max(0, 1 - (x[y_j] - x[i])) / C; the
    target list of each sample ends at the first -1."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    return K.multilabel_margin_loss(input, target, reduction)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean"):
    """sum over i != y of max(0, margin - x[y] + x[i])^p / C (multi-class hinge)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    return K.multi_margin_loss(input, target, p, margin, weight, reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    """x where y = 1, max(0, margin - x) where y = -1."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    return K.hinge_embedding_loss(input, target, margin, reduction)


def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                          reduction="mean"):
    """1 - cos(x1, x2) where y = 1, max(0, cos(x1, x2) - margin) where y = -1."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    return K.cosine_embedding_loss(input1, input2, target, margin, reduction)


def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    """max(0, -y (x1 - x2) + margin)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {input1.shape}, input2: {input2.shape}, target: {target.shape} ")
    return K.margin_ranking_loss(input1, input2, target, margin, reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    """max(d(a, p) - d(a, n) + margin, 0) with the p-norm pairwise distance."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    return K.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0,
                                      swap=False, reduction="mean"):
    """triplet_margin_loss with any distance function (default: pairwise_distance)."""
    from ._distance import pairwise_distance
    _check_reduction(reduction)
    if margin <= 0:
        raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, got {margin} "
                         "instead")
    dist = distance_function if distance_function is not None else pairwise_distance
    d_pos, d_neg = dist(anchor, positive), dist(anchor, negative)
    if swap:
        d_neg = E.minimum(d_neg, dist(positive, negative))
    return K.reduce_loss((d_pos - d_neg + margin).relu(), reduction)
