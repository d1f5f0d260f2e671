"""``NegativeBinomial(total_count, probs=None, logits=None)``."""
import ember_tensor as torch

from . import constraints
from ._probs_or_logits import ProbsOrLogits
from ._sampling import standard_gamma
from .distribution import Distribution
from .utils import softplus

__all__ = ["NegativeBinomial"]


class NegativeBinomial(ProbsOrLogits, Distribution):
    """The number of successes before ``total_count`` failures of Bernoulli(``probs``) trials.

    >>> import ember_tensor as torch
    >>> NegativeBinomial(torch.tensor([2.0]), torch.tensor([0.5])).mean
    tensor([2.])
    """

    arg_constraints = {"total_count": constraints.greater_than_eq(0), "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        (self.total_count,) = self._init_probs_or_logits(probs, logits, total_count)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(NegativeBinomial, _instance)
        batch_shape = torch.Size(batch_shape)
        new.total_count = self.total_count.expand(batch_shape)
        self._expand_probs_or_logits(new, batch_shape)
        super(NegativeBinomial, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.total_count * torch.exp(self.logits)

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / torch.sigmoid(-self.logits)

    def sample(self, sample_shape=torch.Size()):
        # A Poisson whose rate is Gamma(total_count, rate = exp(-logits)) distributed.
        shape = self._extended_shape(sample_shape)
        gamma = standard_gamma(self.total_count.detach().expand(shape)) * torch.exp(self.logits.detach())
        return torch.poisson(gamma.contiguous())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_unnormalized_prob = self.total_count * (-softplus(self.logits)) + value * (-softplus(-self.logits))
        log_normalization = (-torch.lgamma(self.total_count + value) + torch.lgamma(1.0 + value)
                             + torch.lgamma(self.total_count))
        # The case total_count = 0, value = 0 has probability 1, but lgamma(0) is inf.
        log_normalization = log_normalization.masked_fill(self.total_count + value == 0.0, 0.0)
        return log_unnormalized_prob - log_normalization
