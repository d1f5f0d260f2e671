"""The elementwise losses (mse, l1, smooth_l1, huber, kl_div, poisson_nll, binary cross
entropy, soft margin, hinge embedding, margin ranking), one dispatcher op each.

Each is a composite of elementwise ops and a reduction, differentiated through its parts
(PyTorch's CompositeImplicitAutograd), and still one operator: autocast's op lists name
them as PyTorch's do (mse_loss runs in float32 under autocast, binary_cross_entropy is
refused under CUDA autocast), and a trace sees one loss, not its parts. `ember_nn.functional`
checks the arguments (legacy flags, shape warnings) and calls these with the ATen argument
order; `reduction` is "none", "mean" or "sum".
"""
from ..._dispatch import op
from ..elementwise import where

__all__ = ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "kl_div", "poisson_nll_loss",
           "binary_cross_entropy", "binary_cross_entropy_with_logits", "soft_margin_loss",
           "hinge_embedding_loss", "margin_ranking_loss"]


def reduce_loss(loss, reduction):
    """`loss` reduced by `reduction` ("none", "mean" or "sum")."""
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _weighted(loss, weight):
    return loss if weight is None else loss * weight


@op(composite=True)
def mse_loss(input, target, reduction="mean", weight=None):
    """Mean squared error (x - y)^2, optionally weighted elementwise.

    >>> import ember_tensor as torch
    >>> from ember_tensor import nn_ops
    >>> nn_ops.mse_loss(torch.tensor([1., 3.]), torch.tensor([0., 0.])).item()
    5.0
    """
    diff = input - target
    return reduce_loss(_weighted(diff * diff, weight), reduction)


@op(composite=True)
def l1_loss(input, target, reduction="mean", weight=None):
    """Mean absolute error |x - y|, optionally weighted elementwise."""
    return reduce_loss(_weighted((input - target).abs(), weight), reduction)


@op(composite=True)
def smooth_l1_loss(input, target, reduction="mean", beta=1.0):
    """0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (|d| when beta is 0)."""
    d = (input - target).abs()
    if beta == 0:
        return reduce_loss(d, reduction)
    return reduce_loss(where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta), reduction)


@op(composite=True)
def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta)."""
    d = (input - target).abs()
    loss = where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta))
    return reduce_loss(_weighted(loss, weight), reduction)


@op(composite=True)
def kl_div(input, target, reduction="mean", *, log_target=False):
    """Kullback-Leibler divergence of `target` from log-probabilities `input`; reduction may
    also be "batchmean" (the sum over the batch size)."""
    if log_target:
        loss = target.exp() * (target - input)
    else:
        # 0 log 0 is 0: the inner where keeps log's argument positive so no nan leaks into
        # the gradient of the masked entries.
        loss = where(target > 0, target * (where(target > 0, target, 1.0).log() - input), 0.0)
    if reduction == "batchmean":
        return loss.sum() / (input.shape[0] if input.dim() else 1)
    return reduce_loss(loss, reduction)


@op(composite=True)
def poisson_nll_loss(input, target, log_input=True, full=False, eps=1e-8, reduction="mean"):
    """Negative log-likelihood of a Poisson target: exp(x) - y x (log_input) or x - y log(x + eps)."""
    loss = input.exp() - target * input if log_input else input - target * (input + eps).log()
    if full:
        # Stirling's term for y > 1.
        stirling = target * target.log() - target + (target * (2 * 3.141592653589793)).log() * 0.5
        loss = loss + where(target > 1, stirling, 0.0)
    return reduce_loss(loss, reduction)


@op(composite=True)
def binary_cross_entropy(input, target, weight=None, reduction="mean"):
    """-(y log x + (1 - y) log(1 - x)), logs clamped at -100 as PyTorch does."""
    loss = -(target * input.log().clamp(min=-100) + (1 - target) * (1 - input).log().clamp(min=-100))
    return reduce_loss(_weighted(loss, weight), reduction)


@op(composite=True)
def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction="mean"):
    """binary_cross_entropy(sigmoid(x), y) computed stably from the logits x."""
    # log(1 + exp(-|x|)) + max(-x, 0) = -log(sigmoid(x)), without overflow.
    log_sig_neg = (-input.abs()).exp().log1p() + (-input).relu()
    if pos_weight is None:
        loss = (1 - target) * input + log_sig_neg
    else:
        scale = (pos_weight - 1) * target + 1
        loss = (1 - target) * input + scale * log_sig_neg
    return reduce_loss(_weighted(loss, weight), reduction)


@op(composite=True)
def soft_margin_loss(input, target, reduction="mean"):
    """log(1 + exp(-y x)) for targets y in {-1, 1}."""
    z = -target * input
    return reduce_loss(z.relu() + (-z.abs()).exp().log1p(), reduction)


@op(composite=True)
def hinge_embedding_loss(input, target, margin=1.0, reduction="mean"):
    """x where y = 1, max(0, margin - x) where y = -1."""
    loss = where(target == 1, input, 0.0) + where(target == -1, (margin - input).relu(), 0.0)
    return reduce_loss(loss, reduction)


@op(composite=True)
def margin_ranking_loss(input1, input2, target, margin=0.0, reduction="mean"):
    """max(0, -y (x1 - x2) + margin)."""
    return reduce_loss((-target * (input1 - input2) + margin).relu(), reduction)
