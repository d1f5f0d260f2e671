"""``Bernoulli(probs=None, logits=None)``."""
import ember_tensor as torch

from . import constraints
from .exp_family import ExponentialFamily
from ._probs_or_logits import ProbsOrLogits
from .utils import broadcast_all, softplus

__all__ = ["Bernoulli"]


def _binary_cross_entropy_with_logits(logits, value):
    """-[v log sigmoid(l) + (1 - v) log(1 - sigmoid(l))], stably (F lives in ember-nn, a sibling)."""
    return softplus(logits) - value * logits


class Bernoulli(ProbsOrLogits, ExponentialFamily):
    """A Bernoulli distribution: 1 with probability ``probs`` (or sigmoid(``logits``)), else 0.

    >>> import ember_tensor as torch
    >>> Bernoulli(torch.tensor([0.3])).log_prob(torch.tensor([1.0]))
    tensor([-1.2040])
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._init_probs_or_logits(probs, logits)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Bernoulli, _instance)
        batch_shape = torch.Size(batch_shape)
        self._expand_probs_or_logits(new, batch_shape)
        super(Bernoulli, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return torch.where(self.probs == 0.5, torch.full_like(mode, float("nan")), mode)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=torch.Size()):
        shape = self._extended_shape(sample_shape)
        probs = self.probs.detach().expand(shape)
        return torch.bernoulli(probs)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -_binary_cross_entropy_with_logits(logits, value)

    def entropy(self):
        return _binary_cross_entropy_with_logits(self.logits, self.probs)

    def enumerate_support(self, expand=True):
        values = torch.arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + self._batch_shape)
        return values

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        return torch.log1p(torch.exp(x))
