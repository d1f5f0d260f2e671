"""Similarity and distances of batches of vectors that PyTorch implements as ATen ops,
one dispatcher op each: cosine_similarity and pdist.

Composites of norms, products and indexing (differentiated through their parts), and
still one operator each, so that autocast's lists (CUDA's float32 list names both) apply.
`ember_nn.functional` calls them.
"""
import numpy as np

from ... import _dtype as D
from ..._dispatch import op
from ..creation import tensor
from ..shape_ops import broadcast_tensors

__all__ = ["cosine_similarity", "pdist"]


@op(composite=True)
def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """The cosine of the angle between x1 and x2 along `dim`, each normalised by its norm
    clamped at `eps` first (PyTorch's formula).

    >>> import ember_tensor as torch
    >>> from ember_tensor import nn_ops
    >>> nn_ops.cosine_similarity(torch.tensor([[1., 0.]]), torch.tensor([[1., 1.]])).tolist()
    [0.7071067690849304]
    """
    x1, x2 = broadcast_tensors(x1, x2)
    n1 = x1.norm(2, dim, True).clamp(min=eps)
    n2 = x2.norm(2, dim, True).clamp(min=eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


@op(composite=True)
def pdist(input, p=2):
    """The p-norm distances between all pairs of rows of (N, M): the upper triangle of the
    distance matrix, row by row (N (N - 1) / 2 values)."""
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    rows, cols = np.triu_indices(input.shape[0], 1)
    left = input[tensor(rows, dtype=D.int64, device=input.device)]
    right = input[tensor(cols, dtype=D.int64, device=input.device)]
    return (left - right).norm(p, -1)
