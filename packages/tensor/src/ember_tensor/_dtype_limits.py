"""``torch.finfo`` and ``torch.iinfo``: the numeric limits of a floating or integer dtype.

>>> import ember_tensor as torch
>>> torch.finfo(torch.bfloat16).eps, torch.iinfo(torch.int8).max
(0.0078125, 127)
"""
import ml_dtypes
import numpy as np

from . import _dtype as D

__all__ = ["finfo", "iinfo"]


def _checked(type, fn):  # noqa: A002 - PyTorch's parameter name
    if not isinstance(type, D.dtype):
        raise TypeError(f"{fn}(): argument 'type' (position 1) must be torch.dtype, not {_type_name(type)}")
    return type


def _type_name(value):
    return value.__class__.__name__


class finfo:
    """Limits of a floating dtype (the default dtype when none is given): bits, eps, max,
    min, tiny (= smallest_normal), resolution, and the dtype's name."""

    __slots__ = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype")

    def __init__(self, type=None):  # noqa: A002 - PyTorch's parameter name
        type = D.get_default_dtype() if type is None else _checked(type, "finfo")
        # A complex dtype reports the limits of its parts, as in PyTorch.
        type = type.to_real()
        if not type.is_floating_point:
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo to handle "
                            "'torch.finfo'")
        info = ml_dtypes.finfo(type.np) if type is D.bfloat16 or type in D.FLOAT8_DTYPES else np.finfo(type.np)
        self.bits = int(info.bits)
        self.eps, self.max, self.min = float(info.eps), float(info.max), float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -int(info.precision)  # PyTorch reports the decimal step, not its dtype rounding
        if type in D.FLOAT8_DTYPES:
            # c10's numeric_limits for float8 give 0 decimal digits, and its e5m2fnuz
            # epsilon is 2**-3 where ml_dtypes (by the format's 2 mantissa bits) says 2**-2.
            self.resolution = 1.0
            if type is D.float8_e5m2fnuz:
                self.eps = 0.125
        self.dtype = type.name

    def __eq__(self, other):
        return isinstance(other, finfo) and self.dtype == other.dtype

    def __hash__(self):
        return hash(("finfo", self.dtype))

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """Limits of an integer dtype: bits, max, min, and the dtype's name."""

    __slots__ = ("bits", "max", "min", "dtype")

    def __init__(self, type):  # noqa: A002 - PyTorch's parameter name
        type = _checked(type, "iinfo")
        if type is D.bool:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if type.is_floating_point or type.is_complex:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to handle "
                            "'torch.iinfo'")
        info = np.iinfo(type.np)
        self.bits, self.max, self.min = int(info.bits), int(info.max), int(info.min)
        self.dtype = type.name

    def __eq__(self, other):
        return isinstance(other, iinfo) and self.dtype == other.dtype

    def __hash__(self):
        return hash(("iinfo", self.dtype))

    def __repr__(self):
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"
