"""`make_tensor`: a tensor of random values for tests, as `torch.testing.make_tensor`."""
import math

import ml_dtypes
import numpy as np

from .. import _dtype as D
from .._ops import creation, random

__all__ = ["make_tensor"]

# PyTorch's default ranges: [-9, 9] for floating types, [-9, 10) for signed integers and
# [0, 10) for uint8.
_DEFAULT_LOW, _DEFAULT_HIGH = -9, 9


def _bounds(dtype, low, high):
    if dtype is D.uint8:
        lowest, highest = 0, 10
    elif dtype.category == D._INT:
        lowest, highest = _DEFAULT_LOW, 10
    else:
        lowest, highest = _DEFAULT_LOW, _DEFAULT_HIGH
    low = lowest if low is None else max(low, lowest if dtype is D.uint8 else -math.inf)
    high = highest if high is None else high
    if low > high:
        raise ValueError(f"`low` must be less than or equal to `high`, but got {low} > {high}")
    if math.isnan(low) or math.isnan(high):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    return low, high


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False, noncontiguous=False,
                exclude_zero=False, memory_format=None):
    """A tensor of `shape`, `dtype` and `device` with random values in [low, high) (floats:
    [low, high]); PyTorch's defaults are [-9, 9] (integers [-9, 10), uint8 [0, 10)).

    Args:
        noncontiguous: the values live in every other element of a wider tensor.
        exclude_zero: zeros are replaced (by the smallest positive value of the dtype for
            floats, by 1 for integers).

    >>> import ember_tensor as et
    >>> t = make_tensor(2, 3, dtype=et.float32, device="cpu", low=0, high=1)
    >>> t.shape, bool(((t >= 0) & (t <= 1)).all())
    (torch.Size([2, 3]), True)
    """
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    dtype = D.to_dtype(dtype)
    if dtype is D.bool:
        result = random.randint(0, 2, shape, device=device).to(D.bool)
    else:
        low, high = _bounds(dtype, low, high)
        if dtype.category == D._INT:
            result = random.randint(math.ceil(low), math.ceil(high), shape, device=device, dtype=dtype)
        else:
            values = random.rand(shape, device=device, dtype=D.float64)
            result = (values * (high - low) + low).to(dtype)
    if noncontiguous and result.numel() > 1:
        wide = creation.empty(tuple(shape[:-1]) + (2 * shape[-1],), dtype=dtype, device=device)
        wide[..., ::2] = result
        result = wide[..., ::2]
    if exclude_zero and dtype is not D.bool:
        finfo = ml_dtypes.finfo if dtype is D.bfloat16 else np.finfo
        result[result == 0] = 1 if dtype.category == D._INT else float(finfo(dtype.np).tiny)
    if requires_grad:
        result.requires_grad_(True)
    return result
