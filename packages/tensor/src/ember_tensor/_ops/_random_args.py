"""Argument checks and result helpers shared by the random ops (`random`,
`random_inplace`, `multinomial`).

The checks give PyTorch's errors. The helpers are device-free: `sample` and `fill` run a
sampler of the device's backend (`_backends.<device>.random`) with the generator's
stream, into a new tensor, `out` or the tensor itself; `new_tensor` wraps an array a
backend returned.
"""
import warnings

import numpy as np

from .. import _backends
from .. import _dtype as D
from .. import _random
from .._device import to_device
from .._tensor import Tensor, set_requires_grad
from . import _iter
from ._kernel_names import kernel_name
from .complex_views import view_as_real
from .creation import parse_shape

__all__ = ["MISSING", "CPP_NAMES", "DIGITS", "FLOAT_MAX", "int_arg", "float_arg", "pop_from",
           "require_float", "require_float_or_complex", "refuse_complex", "check_std", "check_probabilities", "check_p",
           "random_range", "random_backend", "sample", "sample_complex", "fill", "new_tensor", "factory",
           "like"]

MISSING = object()
# The C++ type names PyTorch's bound checks print, and each float type's integer range
# (std::numeric_limits<T>::digits) and largest finite value.
CPP_NAMES = {"float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float",
             "float64": "double", "int8": "signed char", "int16": "short int", "int32": "int",
             "int64": "long int", "uint8": "unsigned char", "bool": "bool", "complex32": "c10::complex<c10::Half>",
             "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}
DIGITS = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}
FLOAT_MAX = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38,
             "float32": 3.4028234663852886e38, "float64": 1.7976931348623157e308}


# -- arguments and checks ------------------------------------------------------------


def int_arg(value, fn, name, position):
    if isinstance(value, Tensor):
        value = value.__index__()
    if not isinstance(value, (int, np.integer)):
        raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be int, not "
                        f"{type(value).__name__}")
    value = int(value)
    if not -(1 << 63) <= value < (1 << 63):
        raise ValueError("Overflow when unpacking long long")
    return value


def float_arg(value, fn, name):
    try:
        return float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{fn}(): argument '{name}' must be float, not {type(value).__name__}") from None


def pop_from(value, kwargs, fn):
    # `from` is a Python keyword, so PyTorch's ``uniform_(**{'from': 1, 'to': 2})`` lands here.
    if "from" in kwargs:
        value = kwargs.pop("from")
    if kwargs:
        raise TypeError(f"{fn}() got an unexpected keyword argument '{next(iter(kwargs))}'")
    return value


def require_float(dtype, kernel, *where):
    """PyTorch's error for a non-float `dtype`, naming `kernel` (its CUDA twin on CUDA)."""
    if dtype.category != D._FLOAT:
        raise NotImplementedError(f'"{kernel_name(kernel, *where)}" not implemented for \'{_iter.type_name(dtype)}\'')


def require_float_or_complex(dtype, kernel, *where):
    """`require_float` for the samplers PyTorch also runs on complex tensors (uniform and
    normal: they fill the real and imaginary parts)."""
    if dtype.category != D._COMPLEX:
        require_float(dtype, kernel, *where)


def refuse_complex(dtype, kernel, *where):
    """PyTorch's error naming `kernel` for a complex `dtype`, for the samplers of real
    values only (bernoulli, geometric, random_, randperm)."""
    if dtype.category == D._COMPLEX:
        raise NotImplementedError(f'"{kernel_name(kernel, *where)}" not implemented for \'{_iter.type_name(dtype)}\'')


def check_std(std):
    if not std >= 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")


def check_probabilities(probs):
    if not ((probs >= 0) & (probs <= 1)).all():
        raise RuntimeError(
            "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message "
            "be improved?  If so, please report an enhancement request to PyTorch.)")


def check_p(p):
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")


def random_range(dtype, low, to):
    """The inclusive range [low, high] of random_(low, to), with PyTorch's checks."""
    if dtype.category == D._COMPLEX:
        raise RuntimeError("check_random_bounds handles only integral, floating-point and boolean types")
    if to is not None:
        if low >= to:
            raise RuntimeError(
                f"random_ expects 'from' to be less than 'to', but got from={low} >= to={to}")
        high = to - 1
    elif dtype.category == D._FLOAT:
        high = 1 << DIGITS[dtype.name]
        if low >= high:
            raise RuntimeError(
                "random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' casted "
                f"to dtype, but got from={low} > to_inc={high}")
    else:
        high = 1 if dtype is D.bool else int(np.iinfo(dtype.np).max)
    name = CPP_NAMES[dtype.name]
    if dtype.category == D._FLOAT:
        lo_limit, hi_limit = -FLOAT_MAX[dtype.name], FLOAT_MAX[dtype.name]
    else:
        lo_limit, hi_limit = (0, 1) if dtype is D.bool else map(int, (np.iinfo(dtype.np).min,
                                                                      np.iinfo(dtype.np).max))
    for value, what in ((low, "from"), (high, "to - 1")):
        if not lo_limit <= value <= hi_limit:
            raise RuntimeError(f"{what} is out of bounds for {name}")
    if dtype.category == D._FLOAT:
        digits = DIGITS[dtype.name]
        for value, what in ((low, "from"), (high, "to - 1")):
            if not -(1 << digits) <= value <= (1 << digits):
                warnings.warn(
                    f"{what} is out of bounds [-(2^{digits}), 2^{digits}]. Due to precision "
                    f"limitations {name} can support discrete uniform distribution only within "
                    "this range. This warning will become an error in version 1.7 release, please "
                    "fix the code in advance", UserWarning, stacklevel=4)
    return low, high


# -- drawing and storing ---------------------------------------------------------------


def random_backend(device):
    """The random family of `device`'s backend: its samplers and parameter checks."""
    return _backends.get(device).random


def _resized(out, shape):
    """`out`, its storage replaced by a new one of `shape` when it has another shape."""
    if tuple(out._data.shape) != tuple(shape):
        # Factories resize `out` silently in PyTorch (no deprecation warning).
        out._data = out._storage.buf = _backends.get(out._device).storage.empty(tuple(shape), out._data.dtype)
    return out


def sample(sampler, gen, shape, dtype, device, *params, requires_grad=False, out=None):
    """A new tensor (or `out`, resized) of samples: `sampler` (a function of `device`'s
    backend random family) called with `gen`'s stream, `shape`, `dtype` and `params`."""
    target = None if out is None else _resized(out, shape)._data
    values = gen._sample(sampler, tuple(shape), dtype.np, target, *params)
    if out is not None:
        out._bump_version()
        return out
    t = Tensor._wrap(values, dtype, device)
    if requires_grad:
        set_requires_grad(t, True)
    return t


def sample_complex(sampler, gen, shape, dtype, device, *params, requires_grad=False, out=None):
    """`sample` for complex `dtype`, as PyTorch draws complex samples: the real and
    imaginary parts are the real samples of a (*shape, 2) tensor of the part's dtype
    (`params` apply to each part)."""
    if out is not None:
        fill(real_parts(_resized(out, shape)), sampler, gen, *params)
        return out
    parts = gen._sample(sampler, tuple(shape) + (2,), dtype.to_real().np, None, *params)
    values = _backends.get(device).storage.reinterpret_buffer(parts.reshape(-1), dtype.np).reshape(tuple(shape))
    t = Tensor._wrap(values, dtype, device)
    if requires_grad:
        set_requires_grad(t, True)
    return t


def real_parts(self):
    """The (..., 2) real view of complex tensor `self` that complex samplers fill."""
    return view_as_real.impl(self)


def fill(self, sampler, gen, *params):
    """Fill tensor `self` in place with `sampler`'s samples from `gen`; bumps its version."""
    gen._sample(sampler, tuple(self._data.shape), self._dtype.np, self._data, *params)
    self._bump_version()
    return self


def new_tensor(values, dtype, device, requires_grad=False, out=None):
    """A new tensor (or `out`, resized) holding `values`, an array of `device`'s backend,
    as `dtype`."""
    storage = _backends.get(device).storage
    if out is not None:
        storage.copy_(_resized(out, values.shape)._data, values)
        out._bump_version()
        return out
    if values.dtype != dtype.np:
        values = storage.astype(values, dtype.np)
    t = Tensor._wrap(values, dtype, device)
    if requires_grad:
        set_requires_grad(t, True)
    return t


def factory(fn, args, size, out, dtype, device, generator, default_dtype):
    """Shape, dtype, device and generator of a creation op, honouring ``out=``."""
    if size is not None:
        args = (size,)
    if not args:
        raise TypeError(f"{fn}() received an invalid combination of arguments - got (), but "
                        "expected (tuple of ints size, ...)")
    shape = parse_shape(args, fn)
    if out is not None:
        if dtype is not None and D.to_dtype(dtype) is not out._dtype:
            raise RuntimeError(f"dtype {_iter.type_name(D.to_dtype(dtype))} does not match dtype "
                               f"of out parameter ({_iter.type_name(out._dtype)})")
        dtype, device = out._dtype, out._device
    else:
        dtype = default_dtype if dtype is None else D.to_dtype(dtype)
        device = to_device(device)
    return shape, dtype, device, _random.resolve(generator, device, fn)


def like(input, dtype, device, generator, fn):
    dtype = input._dtype if dtype is None else D.to_dtype(dtype)
    device = input._device if device is None else to_device(device)
    return tuple(input._data.shape), dtype, device, _random.resolve(generator, device, fn)
