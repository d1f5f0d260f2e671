"""``HalfNormal(scale)``: |X| for X ~ Normal(0, scale)."""
import math

from ._folded import FoldedAtZero
from .normal import Normal

__all__ = ["HalfNormal"]


class HalfNormal(FoldedAtZero):
    """A half-normal distribution: the absolute value of a Normal(0, scale).

    >>> import ember_tensor as torch
    >>> HalfNormal(torch.tensor([1.0])).log_prob(torch.tensor([0.0]))
    tensor([-0.2258])
    """

    def __init__(self, scale, validate_args=None):
        super().__init__(Normal(0, scale, validate_args=False), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(HalfNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self):
        return self.scale.pow(2) * (1 - 2 / math.pi)
