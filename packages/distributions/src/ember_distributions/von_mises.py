"""``VonMises(loc, concentration)``: a circular distribution on [-pi, pi)."""
import math

import ember_tensor as torch

from . import constraints
from ._sampling import log_modified_bessel
from .distribution import Distribution
from .utils import broadcast_all, lazy_property

__all__ = ["VonMises"]


def _rejection_sample(loc, concentration, proposal_r, shape):
    """Best and Fisher's (1979) wrapped-Cauchy envelope; the loop redraws only rejected elements."""
    dtype, device = concentration.dtype, concentration.device
    kappa = concentration.expand(shape).reshape(-1)
    r = proposal_r.expand(shape).reshape(-1)
    x = torch.empty_like(kappa)
    pending = torch.arange(kappa.numel(), device=device)
    while pending.numel() > 0:
        kp, rp = kappa[pending], r[pending]
        u = torch.rand((3,) + tuple(pending.shape), dtype=dtype, device=device)
        u1, u2, u3 = u[0], u[1], u[2]
        z = torch.cos(math.pi * u1)
        f = (1 + rp * z) / (rp + z)
        c = kp * (rp - f)
        accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
        value = (u3 - 0.5).sign() * f.clamp(min=-1, max=1).acos()
        x[pending[accept]] = value[accept]
        pending = pending[~accept]
    return (x.reshape(shape) + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(Distribution):
    """A von Mises distribution, the circular analogue of the normal, with mean direction ``loc``.

    Sampling is not reparameterised (``has_rsample`` is False), as in PyTorch.

    >>> import ember_tensor as torch
    >>> VonMises(torch.tensor([0.0]), torch.tensor([1.0])).log_prob(torch.tensor([0.0]))
    tensor([-1.0738])
    """

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        batch_shape = self.loc.shape
        super().__init__(batch_shape, torch.Size(), validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.concentration * torch.cos(value - self.loc)
        return log_prob - math.log(2 * math.pi) - log_modified_bessel(self.concentration, order=0)

    @lazy_property
    def _loc(self):
        return self.loc.double()

    @lazy_property
    def _concentration(self):
        return self.concentration.double()

    @lazy_property
    def _proposal_r(self):
        kappa = self._concentration
        tau = 1 + (1 + 4 * kappa ** 2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        _proposal_r = (1 + rho ** 2) / (2 * rho)
        # For tiny kappa, rho underflows: use the series 1/kappa + kappa.
        _proposal_r_taylor = 1 / kappa + kappa
        return torch.where(kappa < 1e-5, _proposal_r_taylor, _proposal_r)

    def sample(self, sample_shape=torch.Size()):
        shape = self._extended_shape(sample_shape)
        with_grad_off = self._loc.detach(), self._concentration.detach(), self._proposal_r.detach()
        return _rejection_sample(*with_grad_off, shape).to(self.loc.dtype)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(VonMises, _instance)
        batch_shape = torch.Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        super(VonMises, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        """The circular mean (the mean direction)."""
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        """The circular variance 1 - I1(kappa) / I0(kappa)."""
        return 1 - (log_modified_bessel(self.concentration, order=1)
                    - log_modified_bessel(self.concentration, order=0)).exp()

    def entropy(self):
        log_i0 = log_modified_bessel(self.concentration, order=0)
        ratio = (log_modified_bessel(self.concentration, order=1) - log_i0).exp()
        return -self.concentration * ratio + math.log(2 * math.pi) + log_i0
