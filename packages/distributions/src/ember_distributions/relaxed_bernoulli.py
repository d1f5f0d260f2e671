"""``RelaxedBernoulli(temperature, probs=None, logits=None)`` and ``LogitRelaxedBernoulli``."""
import ember_tensor as torch

from . import constraints
from ._probs_or_logits import ProbsOrLogits
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import SigmoidTransform
from .utils import broadcast_all, clamp_probs

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]


class LogitRelaxedBernoulli(ProbsOrLogits, Distribution):
    """The logit of a RelaxedBernoulli (binary Concrete) draw: (logit(U) + logits) / temperature.

    >>> import ember_tensor as torch
    >>> LogitRelaxedBernoulli(torch.tensor(0.5), torch.tensor([0.3])).batch_shape
    torch.Size([1])
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self.temperature = temperature
        self._init_probs_or_logits(probs, logits)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogitRelaxedBernoulli, _instance)
        batch_shape = torch.Size(batch_shape)
        new.temperature = self.temperature
        self._expand_probs_or_logits(new, batch_shape)
        super(LogitRelaxedBernoulli, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    has_rsample = True

    def rsample(self, sample_shape=torch.Size()):
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(self.probs.expand(shape))
        uniforms = clamp_probs(torch.rand(shape, dtype=probs.dtype, device=probs.device))
        return (uniforms.log() - (-uniforms).log1p() + probs.log() - (-probs).log1p()) / self.temperature

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value * self.temperature
        temperature = torch.as_tensor(self.temperature, dtype=diff.dtype, device=diff.device)
        return temperature.log() + diff - 2 * diff.exp().log1p()


class RelaxedBernoulli(TransformedDistribution):
    """A RelaxedBernoulli (binary Concrete) distribution on (0, 1), reparameterised; it tends
    to Bernoulli(probs) as ``temperature`` goes to 0 (Maddison et al., 2017; Jang et al., 2017).

    >>> import ember_tensor as torch
    >>> RelaxedBernoulli(torch.tensor(0.5), torch.tensor([0.3])).support
    Interval(lower_bound=0.0, upper_bound=1.0)
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base_dist = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base_dist, SigmoidTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedBernoulli, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs
