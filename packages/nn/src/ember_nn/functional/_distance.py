"""Distances and similarities between batches of vectors."""
from ember_tensor import nn_ops as K

__all__ = ["pairwise_distance", "cosine_similarity", "pdist"]


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """||x1 - x2 + eps||_p along the last dim."""
    if x1.dim() == 0 or x2.dim() == 0:
        raise RuntimeError("pairwise_distance: expected inputs with at least one dimension")
    return (x1 - x2 + eps).norm(p, -1, keepdim)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """Cosine of the angle between x1 and x2 along `dim` (norms clamped at `eps`)."""
    return K.cosine_similarity(x1, x2, dim, eps)


def pdist(input, p=2):
    """Distances between all pairs of rows of (N, M): the upper triangle, row by row."""
    return K.pdist(input, p)
