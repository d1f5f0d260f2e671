"""``Categorical(probs=None, logits=None)``."""
import math

import ember_tensor as torch

from . import constraints
from .distribution import Distribution
from .utils import finfo, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Categorical"]

# One row of weights and many draws: the inverse CDF by one compare-and-add pass over the
# draws per category (~0.8 ms per 1e6 draws on the development machine) beats
# multinomial's binary search (~25 ms per 1e6) up to a few dozen categories; below a
# thousand draws the per-op overheads of K passes outweigh it.
_INVERSE_CDF_MAX_CATEGORIES = 32
_INVERSE_CDF_MIN_DRAWS = 1024


class Categorical(Distribution):
    """A categorical distribution over {0, ..., K-1}, K the size of the last dim of ``probs``/``logits``.

    ``probs`` need not sum to 1 (they are normalised); ``logits`` are unnormalised log-probabilities.

    >>> import ember_tensor as torch
    >>> Categorical(torch.tensor([0.25, 0.75])).log_prob(torch.tensor(1))
    tensor(-0.2877)
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.size()[-1]
        batch_shape = self._param.size()[:-1] if self._param.dim() > 1 else torch.Size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Categorical, _instance)
        batch_shape = torch.Size(batch_shape)
        param_shape = batch_shape + torch.Size((self._num_events,))
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(param_shape)
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(param_shape)
            new._param = new.logits
        new._num_events = self._num_events
        super(Categorical, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits)

    @property
    def param_shape(self):
        return self._param.size()

    @property
    def mean(self):
        return torch.full(self._extended_shape(), math.nan, dtype=self.probs.dtype, device=self.probs.device)

    @property
    def mode(self):
        return self.probs.argmax(-1)

    @property
    def variance(self):
        return torch.full(self._extended_shape(), math.nan, dtype=self.probs.dtype, device=self.probs.device)

    def sample(self, sample_shape=torch.Size()):
        if not isinstance(sample_shape, torch.Size):
            sample_shape = torch.Size(sample_shape)
        probs_2d = self.probs.detach().reshape(-1, self._num_events)
        n = sample_shape.numel()
        if probs_2d.shape[0] == 1:
            if n >= _INVERSE_CDF_MIN_DRAWS and 2 <= self._num_events <= _INVERSE_CDF_MAX_CATEGORIES:
                samples_2d = _inverse_cdf_draws(probs_2d[0], n).reshape(n, 1)
            else:
                samples_2d = torch.multinomial(probs_2d[0], n, True).reshape(n, 1)
        else:
            samples_2d = torch.multinomial(probs_2d, n, True).T
        return samples_2d.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = torch.broadcast_tensors(value, self.logits)
        value = value[..., :1]
        return log_pmf.gather(-1, value).squeeze(-1)

    def entropy(self):
        min_real = finfo(self.logits.dtype).min
        logits = torch.clamp(self.logits, min=min_real)
        p_log_p = logits * self.probs
        return -p_log_p.sum(-1)

    def enumerate_support(self, expand=True):
        num_events = self._num_events
        values = torch.arange(num_events, dtype=torch.long, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + self._batch_shape)
        return values


def _inverse_cdf_draws(probs, n):
    """``n`` category indices drawn from the 1-d weights ``probs`` (at least 2 categories).

    The index of a uniform draw u is the number of normalised cumulative weights at or
    below it (a search by counting, which for few categories costs less than a binary
    search per draw). Draws and cumulative weights are float64, as PyTorch's multinomial
    draws, so categories of tiny weight keep their frequency.
    """
    cdf = probs.double().cumsum(0)
    total = cdf[-1]
    if not bool((probs.min() >= 0) & torch.isfinite(total) & (total > 0)):
        return torch.multinomial(probs, n, True)  # raises PyTorch's error for these weights
    # A zero-weight category repeats the threshold before it, so no draw lands on it; the
    # thresholds of trailing zero-weight categories are exactly 1.0 (total / total), which
    # a draw in [0, 1) never reaches.
    thresholds = cdf[:-1] / total
    u = torch.rand(n, dtype=torch.float64, device=probs.device)
    # uint8 counts (at most 31) move an eighth of the bytes of int64 in each pass.
    index = (u >= thresholds[0]).to(torch.uint8)
    for k in range(1, thresholds.numel()):
        index += u >= thresholds[k]
    return index.long()
