"""The smooth activation PyTorch implements as an ATen op, as one dispatcher op: softplus,
log(1 + exp(beta x)) / beta, x itself where beta x > threshold.

A composite (differentiated through where, exp and log1p) and still one operator, so
that autocast's CUDA float32 list, which names it, applies. `ember_nn.functional.softplus`
calls it.
"""
from ..._dispatch import op
from ..elementwise import where

__all__ = ["softplus"]


@op(composite=True)
def softplus(input, beta=1.0, threshold=20.0):
    """log(1 + exp(beta * x)) / beta, linear where beta * x > threshold.

    >>> import ember_tensor as torch
    >>> from ember_tensor import nn_ops
    >>> round(nn_ops.softplus(torch.tensor([0.0])).item(), 4)
    0.6931
    """
    scaled = input * beta
    # Capped with `where`, not clamp: clamp passes no gradient to NaN, and PyTorch's
    # softplus gradient at NaN is nan.
    soft = where(scaled > threshold, threshold, scaled).exp().log1p() / beta
    return where(scaled > threshold, input, soft)
