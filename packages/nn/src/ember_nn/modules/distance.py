"""PairwiseDistance and CosineSimilarity between two batches of vectors."""
from .. import functional as F
from .module import Module

__all__ = ["PairwiseDistance", "CosineSimilarity"]


class PairwiseDistance(Module):
    """The p-norm of ``x1 - x2 + eps`` along the last dim.

    >>> import ember_tensor as torch
    >>> PairwiseDistance()(torch.zeros(2, 3), torch.ones(2, 3)).shape
    torch.Size([2])
    """

    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1, x2):
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class CosineSimilarity(Module):
    """``x1 . x2 / max(||x1|| ||x2||, eps)`` along `dim`."""

    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)
