"""``Normal(loc, scale)``."""
import math
from numbers import Real

import numpy as np
import ember_autograd
import ember_tensor as torch

from . import constraints
from .exp_family import ExponentialFamily
from .utils import _standard_normal, broadcast_all

__all__ = ["Normal"]

_HALF = np.float32(0.5)  # float32 literals keep float32 tensors in float32 arithmetic
_LOG_SQRT_2PI = math.log(math.sqrt(2 * math.pi))


@torch.kernel
def _normal_log_prob(value, loc, scale, log_sqrt_2pi):
    """log N(value; loc, scale) in one pass over memory (the composite makes six temporaries).

    The constant comes as an argument, not a global: a Python number takes the tensors'
    dtype, so float32 inputs are computed in float32 throughout (a float64 global would
    convert every element there and back, ~15% of the kernel's time on one thread).
    """
    z = (value - loc) / scale
    return -_HALF * z * z - math.log(scale) - log_sqrt_2pi


class Normal(ExponentialFamily):
    """A normal (Gaussian) distribution with mean ``loc`` and standard deviation ``scale``.

    >>> import ember_tensor as torch
    >>> Normal(torch.tensor([0.0]), torch.tensor([1.0])).log_prob(torch.tensor([0.0]))
    tensor([-0.9189])
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        if isinstance(loc, Real) and isinstance(scale, Real):
            batch_shape = torch.Size()
        else:
            batch_shape = self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Normal, _instance)
        batch_shape = torch.Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        super(Normal, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=torch.Size()):
        shape = self._extended_shape(sample_shape)
        with ember_autograd.no_grad():
            return torch.normal(self.loc.expand(shape), self.scale.expand(shape))

    def rsample(self, sample_shape=torch.Size()):
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        if not ember_autograd.is_grad_enabled() or not any(
                torch.is_tensor(t) and t.requires_grad for t in (value, self.loc, self.scale)):
            # No graph to record: the fused kernel. With one, the composite below keeps
            # log_prob differentiable to any order.
            return _normal_log_prob(value, self.loc, self.scale, _LOG_SQRT_2PI)
        var = self.scale ** 2
        log_scale = math.log(self.scale) if isinstance(self.scale, Real) else self.scale.log()
        return -((value - self.loc) ** 2) / (2 * var) - log_scale - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + torch.erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def icdf(self, value):
        return self.loc + self.scale * torch.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + torch.log(self.scale)

    @property
    def _natural_params(self):
        return (self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal())

    def _log_normalizer(self, x, y):
        return -0.25 * x.pow(2) / y + 0.5 * torch.log(-math.pi / y)
