"""The distribution of |X| for X symmetric about 0 with a ``scale``: HalfNormal, HalfCauchy."""
import math

import ember_tensor as torch

from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform

__all__ = ["FoldedAtZero"]


class FoldedAtZero(TransformedDistribution):
    """|X| for X ~ ``base_dist``, a distribution symmetric about 0 with a ``scale``: the
    density doubles on [0, inf), F(x) = 2 F_X(x) - 1, and the entropy loses log 2.

    >>> import ember_tensor as torch
    >>> from ember_distributions import HalfNormal
    >>> HalfNormal(torch.tensor([1.0])).cdf(torch.tensor([0.0]))
    tensor([0.])
    """

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, base_dist, validate_args=None):
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mode(self):
        return torch.zeros_like(self.scale)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return torch.where(value >= 0, log_prob, torch.full_like(log_prob, -math.inf))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)
