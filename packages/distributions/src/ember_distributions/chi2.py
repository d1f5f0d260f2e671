"""``Chi2(df)``: Gamma(df / 2, 1 / 2)."""
import ember_tensor as torch

from . import constraints
from .gamma import Gamma

__all__ = ["Chi2"]


class Chi2(Gamma):
    """A chi-squared distribution with ``df`` degrees of freedom.

    >>> import ember_tensor as torch
    >>> Chi2(torch.tensor([4.0])).mean
    tensor([4.])
    """

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        df = torch.as_tensor(df, dtype=torch.get_default_dtype()) if not torch.is_tensor(df) else df
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Chi2, _instance)
        return super().expand(batch_shape, new)

    @property
    def df(self):
        return self.concentration * 2
