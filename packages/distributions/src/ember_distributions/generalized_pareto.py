"""``GeneralizedPareto(loc, scale, concentration)``."""
import math
from numbers import Number

import ember_tensor as torch

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """The generalized Pareto distribution, the law of threshold exceedances: Exponential
    at concentration 0, Pareto-like above, bounded (Uniform at -1) below.

    Samples are reparameterised by the inverse CDF.

    >>> import ember_tensor as torch
    >>> GeneralizedPareto(torch.tensor([0.0]), torch.tensor([2.0]), torch.tensor([0.0])).mean
    tensor([2.])
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive, "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        scalars = all(isinstance(v, Number) for v in (loc, scale, concentration))
        super().__init__(torch.Size() if scalars else self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(GeneralizedPareto, _instance)
        batch_shape = torch.Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        super(GeneralizedPareto, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _exponential_case(self):
        """Where the concentration is (close to) 0, and a concentration safe to divide by."""
        at_zero = torch.isclose(self.concentration, torch.zeros_like(self.concentration))
        return at_zero, torch.where(at_zero, torch.ones_like(self.concentration), self.concentration)

    def rsample(self, sample_shape=torch.Size()):
        shape = self._extended_shape(sample_shape)
        return self.icdf(torch.rand(shape, dtype=self.loc.dtype, device=self.loc.device))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        at_zero, conc = self._exponential_case()
        power = 1 / conc + torch.ones_like(z)
        # (1/xi + 1) log(1 + xi z); at xi = -1 the density is flat and the power is 0.
        general = torch.where(power == 0, power, power * torch.log1p(conc * z))
        return -self.scale.log() - torch.where(at_zero, z, general)

    def log_survival_function(self, value):
        """log P(X > value)."""
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        at_zero, conc = self._exponential_case()
        return torch.where(at_zero, -z, -torch.log1p(conc * z) / conc)

    def log_cdf(self, value):
        """log P(X <= value)."""
        return torch.log1p(-torch.exp(self.log_survival_function(value)))

    def cdf(self, value):
        return torch.exp(self.log_cdf(value))

    def icdf(self, value):
        at_zero, conc = self._exponential_case()
        log_survival = torch.log1p(-value)
        general = self.loc + self.scale / conc * torch.expm1(-conc * log_survival)
        return torch.where(at_zero, self.loc - self.scale * log_survival, general)

    @property
    def mean(self):
        finite = self.concentration < 1
        conc = torch.where(finite, self.concentration, torch.full_like(self.concentration, 0.5))
        result = self.loc + self.scale / (1 - conc)
        return torch.where(finite, result, torch.full_like(result, math.nan))

    @property
    def variance(self):
        finite = self.concentration < 0.5
        conc = torch.where(finite, self.concentration, torch.full_like(self.concentration, 0.25))
        result = self.scale ** 2 / ((1 - conc) ** 2 * (1 - 2 * conc))
        return torch.where(finite, result, torch.full_like(result, math.nan))

    def entropy(self):
        return (torch.log(self.scale) + self.concentration + 1).expand(self._batch_shape)

    @property
    def mode(self):
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        lower = self.loc
        upper = torch.where(self.concentration < 0, lower - self.scale / self.concentration,
                            torch.full_like(lower, math.inf))
        return constraints.interval(lower, upper)
