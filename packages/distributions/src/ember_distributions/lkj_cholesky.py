"""``LKJCholesky(dim, concentration=1.0)``: Cholesky factors of LKJ-distributed correlation matrices."""
import math

import ember_tensor as torch

from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import broadcast_all, finfo

__all__ = ["LKJCholesky"]


def _mvlgamma(x, p):
    """The multivariate log-gamma function of dimension p (ember_tensor has no mvlgamma)."""
    result = p * (p - 1) / 4 * math.log(math.pi)
    for i in range(p):
        result = result + torch.lgamma(x - i / 2)
    return result


class LKJCholesky(Distribution):
    """The LKJ distribution over the lower Cholesky factor L of a correlation matrix L L^T,
    with density proportional to det(L L^T)^(concentration - 1); sampled by the onion method.

    >>> import ember_tensor as torch
    >>> LKJCholesky(3, 0.5).sample().shape
    torch.Size([3, 3])
    """

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = self.concentration.size()
        event_shape = torch.Size((dim, dim))
        # Onion method: row i has squared norm Beta(i / 2, concentration + (dim - 1 - i) / 2) off the diagonal.
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = torch.arange(self.dim - 1, dtype=self.concentration.dtype, device=self.concentration.device)
        offset = torch.cat([offset.new_zeros((1,)), offset])
        beta_conc1 = offset + 0.5
        beta_conc0 = marginal_conc.unsqueeze(-1) - 0.5 * offset
        self._beta = Beta(beta_conc1, beta_conc0)
        super().__init__(batch_shape, event_shape, validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = torch.Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(batch_shape + (self.dim,))
        super(LKJCholesky, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=torch.Size()):
        y = self._beta.sample(sample_shape).unsqueeze(-1)
        u_normal = torch.randn(self._extended_shape(sample_shape), dtype=y.dtype, device=y.device).tril(-1)
        # Row 0 is all zeros: dividing by a clamped norm keeps it zero instead of 0/0.
        norm = torch.linalg.vector_norm(u_normal, dim=-1, keepdim=True).clamp(min=finfo(y.dtype).tiny)
        u_hypersphere = u_normal / norm
        w = torch.sqrt(y) * u_hypersphere
        diag_elems = torch.clamp(1 - torch.sum(w ** 2, dim=-1), min=finfo(w.dtype).tiny).sqrt()
        return w + torch.diag_embed(diag_elems)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diag_elems = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = torch.arange(2, self.dim + 1, dtype=self.concentration.dtype, device=self.concentration.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized_log_pdf = torch.sum(order * diag_elems.log(), dim=-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = torch.lgamma(alpha) * dm1
        numerator = _mvlgamma(alpha - 0.5, dm1)
        # The normaliser of the LKJ density over correlation matrices (Lewandowski et al., 2009).
        pi_constant = 0.5 * dm1 * math.log(math.pi)
        normalize_term = pi_constant + numerator - denominator
        return unnormalized_log_pdf - normalize_term
