"""Distances and similarities between batches of vectors."""
import numpy as np

import ember_tensor as E

__all__ = ["pairwise_distance", "cosine_similarity", "pdist"]


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """||x1 - x2 + eps||_p along the last dim."""
    if x1.dim() == 0 or x2.dim() == 0:
        raise RuntimeError("pairwise_distance: expected inputs with at least one dimension")
    return (x1 - x2 + eps).norm(p, -1, keepdim)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """Cosine of the angle between x1 and x2 along `dim` (norms clamped at `eps`)."""
    x1, x2 = E.broadcast_tensors(x1, x2)
    n1 = x1.norm(2, dim, True).clamp(min=eps)
    n2 = x2.norm(2, dim, True).clamp(min=eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pdist(input, p=2):
    """Distances between all pairs of rows of (N, M): the upper triangle, row by row."""
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    n = input.shape[0]
    rows, cols = np.triu_indices(n, 1)
    left = input[E.tensor(rows, dtype=E.int64)]
    right = input[E.tensor(cols, dtype=E.int64)]
    return (left - right).norm(p, -1)
