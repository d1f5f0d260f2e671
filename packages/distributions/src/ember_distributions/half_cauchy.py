"""``HalfCauchy(scale)``: |X| for X ~ Cauchy(0, scale)."""
import math

import ember_tensor as torch

from ._folded import FoldedAtZero
from .cauchy import Cauchy

__all__ = ["HalfCauchy"]


class HalfCauchy(FoldedAtZero):
    """A half-Cauchy distribution: the absolute value of a Cauchy(0, scale).

    >>> import ember_tensor as torch
    >>> HalfCauchy(torch.tensor([1.0])).log_prob(torch.tensor([0.0]))
    tensor([-0.4516])
    """

    def __init__(self, scale, validate_args=None):
        super().__init__(Cauchy(0, scale, validate_args=False), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(HalfCauchy, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return torch.full(self._extended_shape(), math.inf, dtype=self.scale.dtype, device=self.scale.device)

    @property
    def variance(self):
        return self.base_dist.variance
