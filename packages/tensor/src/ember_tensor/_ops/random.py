"""Random sampling: rand/randn/randint/randperm, normal, bernoulli, multinomial, poisson,
the *_like forms, and the in-place samplers (uniform_, normal_, random_, bernoulli_,
exponential_, geometric_, log_normal_, cauchy_).

Every op draws from a `Generator` (``generator=``, else the default one) on the host
with NumPy's PCG64, float32 directly where the tensor is not float64, and then puts the
values on the tensor's device. So a seed gives the same tensor on the CPU and on CUDA;
it does not give PyTorch's values (another engine), only PyTorch's distributions,
dtypes, shapes and error messages.
"""
import warnings

import numpy as np

from .. import _backends
from .. import _dtype as D
from .. import _random
from .._device import to_device
from .._dispatch import op
from .._tensor import Tensor, set_requires_grad
from . import _iter, views
from .creation import parse_shape

__all__ = ["rand", "randn", "randint", "randperm", "normal", "bernoulli", "multinomial", "poisson",
           "rand_like", "randn_like", "randint_like", "uniform_", "normal_", "random_", "bernoulli_",
           "exponential_", "geometric_", "log_normal_", "cauchy_"]

_MISSING = object()
# The C++ type names PyTorch's bound checks print, and each float type's integer range
# (std::numeric_limits<T>::digits) and largest finite value.
_CPP_NAMES = {"float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float",
              "float64": "double", "int8": "signed char", "int16": "short int", "int32": "int",
              "int64": "long int", "uint8": "unsigned char", "bool": "bool"}
_DIGITS = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}
_FLOAT_MAX = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38,
              "float32": 3.4028234663852886e38, "float64": 1.7976931348623157e308}
# NumPy's Poisson sampler refuses rates near 2**63; such counts equal their rate to
# within float precision anyway.
_POISSON_MAX_RATE = 1e18


# -- arguments and checks ------------------------------------------------------------


def _int_arg(value, fn, name, position):
    if isinstance(value, Tensor):
        value = value.__index__()
    if not isinstance(value, (int, np.integer)):
        raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be int, not "
                        f"{type(value).__name__}")
    value = int(value)
    if not -(1 << 63) <= value < (1 << 63):
        raise ValueError("Overflow when unpacking long long")
    return value


def _float_arg(value, fn, name):
    try:
        return float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{fn}(): argument '{name}' must be float, not {type(value).__name__}") from None


def _pop_from(value, kwargs, fn):
    # `from` is a Python keyword, so PyTorch's ``uniform_(**{'from': 1, 'to': 2})`` lands here.
    if "from" in kwargs:
        value = kwargs.pop("from")
    if kwargs:
        raise TypeError(f"{fn}() got an unexpected keyword argument '{next(iter(kwargs))}'")
    return value


def _require_float(dtype, kernel):
    if dtype.category != D._FLOAT:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_iter.type_name(dtype)}\'')


def _check_std(std):
    if not std >= 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")


def _check_probabilities(probs):
    if not ((probs >= 0) & (probs <= 1)).all():
        raise RuntimeError(
            "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message "
            "be improved?  If so, please report an enhancement request to PyTorch.)")


def _check_p(p):
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")


def _random_range(dtype, low, to):
    """The inclusive range [low, high] of random_(low, to), with PyTorch's checks."""
    if to is not None:
        if low >= to:
            raise RuntimeError(
                f"random_ expects 'from' to be less than 'to', but got from={low} >= to={to}")
        high = to - 1
    elif dtype.category == D._FLOAT:
        high = 1 << _DIGITS[dtype.name]
        if low >= high:
            raise RuntimeError(
                "random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' casted "
                f"to dtype, but got from={low} > to_inc={high}")
    else:
        high = 1 if dtype is D.bool else int(np.iinfo(dtype.np).max)
    name = _CPP_NAMES[dtype.name]
    if dtype.category == D._FLOAT:
        lo_limit, hi_limit = -_FLOAT_MAX[dtype.name], _FLOAT_MAX[dtype.name]
    else:
        lo_limit, hi_limit = (0, 1) if dtype is D.bool else map(int, (np.iinfo(dtype.np).min,
                                                                      np.iinfo(dtype.np).max))
    for value, what in ((low, "from"), (high, "to - 1")):
        if not lo_limit <= value <= hi_limit:
            raise RuntimeError(f"{what} is out of bounds for {name}")
    if dtype.category == D._FLOAT:
        digits = _DIGITS[dtype.name]
        for value, what in ((low, "from"), (high, "to - 1")):
            if not -(1 << digits) <= value <= (1 << digits):
                warnings.warn(
                    f"{what} is out of bounds [-(2^{digits}), 2^{digits}]. Due to precision "
                    f"limitations {name} can support discrete uniform distribution only within "
                    "this range. This warning will become an error in version 1.7 release, please "
                    "fix the code in advance", UserWarning, stacklevel=4)
    return low, high


# -- drawing and storing ---------------------------------------------------------------


def _compute_type(dtype):
    """Draw float64 for float64 tensors and float32 for every other one (NumPy's fast path)."""
    return np.float64 if dtype is D.float64 else np.float32


def _uniform(gen, shape, dtype):
    values = gen._draw("random", shape, dtype=_compute_type(dtype))
    digits = _DIGITS.get(dtype.name, 24)
    if digits < 24:
        # Round down onto the narrow type's grid: float32 values just below 1 would round
        # up to 1.0 in half or bfloat16, and rand() must stay in [0, 1).
        scale = np.float32(1 << digits)
        values = np.floor(values * scale) / scale
    return values


def _standard_normal(gen, shape, dtype):
    return gen._draw("standard_normal", shape, dtype=_compute_type(dtype))


def _new_tensor(values, dtype, device, requires_grad=False, out=None):
    """A new tensor (or `out`, resized) holding host values `values` as `dtype` on `device`."""
    values = np.asarray(values)
    if out is not None:
        if tuple(out._data.shape) != values.shape:
            # Factories resize `out` silently in PyTorch (no deprecation warning).
            data = _backends.get(out._device).empty(values.shape, out._data.dtype)
            out._data = out._storage.buf = data
        return _store(out, values)
    values = np.asarray(values, dtype=dtype.np, order="C")
    if device.type != "cpu":
        values = _backends.get(device).from_numpy(values, device)
    t = Tensor._wrap(values, dtype, device)
    if requires_grad:
        set_requires_grad(t, True)
    return t


def _store(self, values):
    """Write host values (self's shape) into tensor `self` in place; bump its version."""
    backend = _backends.get(self._device)
    if self._device.type != "cpu":
        values = backend.from_numpy(np.asarray(values, dtype=self._dtype.np, order="C"), self._device)
    backend.copy_(self._data, values)
    self._bump_version()
    return self


def _factory(fn, args, size, out, dtype, device, generator, default_dtype):
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


def _like(input, dtype, device, generator, fn):
    dtype = input._dtype if dtype is None else D.to_dtype(dtype)
    device = input._device if device is None else to_device(device)
    return tuple(input._data.shape), dtype, device, _random.resolve(generator, device, fn)


# -- creation ----------------------------------------------------------------------------


@op()
def rand(*args, size=None, generator=None, out=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False):
    """Uniform samples in [0, 1): ``rand(2, 3)`` or ``rand((2, 3))``.

    >>> import ember_tensor as torch
    >>> x = torch.rand(2, 3, generator=torch.Generator().manual_seed(0))
    >>> x.shape, all(0 <= v < 1 for v in x.flatten().tolist())
    (torch.Size([2, 3]), True)
    """
    shape, dtype, device, gen = _factory("rand", args, size, out, dtype, device, generator,
                                         D.get_default_dtype())
    _require_float(dtype, "check_uniform_bounds")
    return _new_tensor(_uniform(gen, shape, dtype), dtype, device, requires_grad, out)


@op()
def randn(*args, size=None, generator=None, out=None, dtype=None, layout=None, device=None,
          requires_grad=False, pin_memory=False):
    """Standard normal samples (mean 0, variance 1): ``randn(2, 3)``.

    >>> import ember_tensor as torch
    >>> torch.randn(4, dtype=torch.float64).dtype
    torch.float64
    """
    shape, dtype, device, gen = _factory("randn", args, size, out, dtype, device, generator,
                                         D.get_default_dtype())
    _require_float(dtype, "normal_kernel_cpu")
    return _new_tensor(_standard_normal(gen, shape, dtype), dtype, device, requires_grad, out)


@op()
def randint(low=None, high=None, size=None, *, generator=None, out=None, dtype=None, layout=None,
            device=None, requires_grad=False, pin_memory=False):
    """Integers uniform in [low, high): ``randint(high, size)`` or ``randint(low, high, size)``.

    >>> import ember_tensor as torch
    >>> x = torch.randint(3, 10, (100,))
    >>> x.dtype, set(x.tolist()) <= set(range(3, 10))
    (torch.int64, True)
    """
    position = 3
    if size is None and low is not None:  # the two-argument form randint(high, size)
        low, high, size, position = 0, low, high, 2
    if high is None or size is None:
        raise TypeError(f"randint() missing required argument '{'high' if high is None else 'size'}'")
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"randint(): argument 'size' (position {position}) must be tuple of ints, "
                        f"not {type(size).__name__}")
    low = 0 if low is None else _int_arg(low, "randint", "low", 1)
    high = _int_arg(high, "randint", "high", position - 1)
    shape, dtype, device, gen = _factory("randint", (), size, out, dtype, device, generator, D.int64)
    low, high = _random_range(dtype, low, high)
    values = gen._draw("integers", low, high, shape, dtype=np.int64, endpoint=True)
    return _new_tensor(values, dtype, device, requires_grad, out)


@op()
def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
    """A random permutation of 0 .. n-1 (int64 unless `dtype` says otherwise).

    >>> import ember_tensor as torch
    >>> sorted(torch.randperm(5).tolist())
    [0, 1, 2, 3, 4]
    """
    n = _int_arg(n, "randperm", "n", 1)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    _, dtype, device, gen = _factory("randperm", (), (), out, dtype, device, generator, D.int64)
    if dtype is D.bool:
        raise NotImplementedError("\"randperm\" not implemented for 'Bool'")
    if dtype is D.float16 and n > 2049:
        raise RuntimeError("n cannot be greater than 2049 for Half type.")
    if dtype.category == D._INT and n - 1 > np.iinfo(dtype.np).max:
        raise RuntimeError(f"value cannot be converted to type {dtype.name}_t without overflow")
    return _new_tensor(gen._draw("permutation", n), dtype, device, requires_grad, out)


@op()
def normal(mean, std=_MISSING, size=None, *, generator=None, out=None, dtype=None, layout=None,
           device=None, pin_memory=False, requires_grad=False):
    """Normal samples with the given mean and standard deviation.

    Four forms, as in PyTorch: ``normal(mean_tensor, std_tensor)`` (shapes broadcast),
    ``normal(mean_tensor, std=1.0)``, ``normal(mean_float, std_tensor)``, and
    ``normal(mean_float, std_float, size)``, which alone takes dtype/device/requires_grad.

    >>> import ember_tensor as torch
    >>> torch.normal(torch.zeros(2, 3), torch.ones(3)).shape
    torch.Size([2, 3])
    >>> torch.normal(2., 3., size=(4,)).shape
    torch.Size([4])
    """
    mean_is_tensor, std_is_tensor = isinstance(mean, Tensor), isinstance(std, Tensor)
    if not (mean_is_tensor or std_is_tensor):
        if std is _MISSING or size is None:
            got = ", ".join(type(v).__name__ for v in (mean, std) if v is not _MISSING)
            raise TypeError(f"normal() received an invalid combination of arguments - got ({got}), "
                            "but expected (float mean, float std, tuple of ints size, ...)")
        mean, std = _float_arg(mean, "normal", "mean"), _float_arg(std, "normal", "std")
        _check_std(std)
        shape, dtype, device, gen = _factory("normal", (), size, out, dtype, device, generator,
                                             D.get_default_dtype())
        _require_float(dtype, "normal_kernel_cpu")
        values = mean + std * _standard_normal(gen, shape, dtype)
        return _new_tensor(values, dtype, device, requires_grad, out)
    if size is not None or dtype is not None or device is not None or requires_grad:
        raise TypeError("normal() received an invalid combination of arguments: size, dtype, device "
                        "and requires_grad are only accepted by normal(float mean, float std, size)")
    if std is _MISSING:
        std = 1.0
    if std_is_tensor:
        std_values = np.asarray(std._host_numpy(), np.float64)
        if not (std_values >= 0).all():
            raise RuntimeError("normal expects all elements of std >= 0.0")
    else:
        std = _float_arg(std, "normal", "std")
        _check_std(std)
    result_dtype = mean._dtype if mean_is_tensor else std._dtype
    _require_float(result_dtype, "normal_kernel_cpu")
    shape = _iter.broadcast_shapes(tuple(mean.shape) if mean_is_tensor else (),
                                   tuple(std.shape) if std_is_tensor else ())
    device = _iter.common_device((mean, std))
    gen = _random.resolve(generator, device, "normal")
    compute = _compute_type(result_dtype)
    mean_values = mean._host_numpy().astype(compute) if mean_is_tensor else float(mean)
    std_values = std._host_numpy().astype(compute) if std_is_tensor else std
    values = mean_values + std_values * _standard_normal(gen, shape, result_dtype)
    return _new_tensor(values, result_dtype, device, out=out)


# -- sampling from a tensor of parameters -------------------------------------------------


@op()
def bernoulli(input, p=None, *, generator=None, out=None):
    """0/1 samples: 1 with probability `input` (or with probability `p` everywhere).

    >>> import ember_tensor as torch
    >>> torch.bernoulli(torch.tensor([0., 1., 1.]))
    tensor([0., 1., 1.])
    """
    if isinstance(p, Tensor):
        raise TypeError("bernoulli() received an invalid combination of arguments - got (Tensor, "
                        "Tensor), but expected (Tensor input, float p, *, Generator generator)")
    gen = _random.resolve(generator, input._device, "bernoulli")
    if p is None:
        _require_float(input._dtype, "bernoulli_tensor_cpu_p_")
        p = np.asarray(input._host_numpy(), np.float64)
        _check_probabilities(p)
    else:
        p = _float_arg(p, "bernoulli", "p")
        _check_p(p)
    values = gen._draw("random", tuple(input._data.shape)) < p
    return _new_tensor(values, input._dtype, input._device, out=out)


@op()
def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """Category indices drawn from the rows of `input` (non-negative weights).

    Without replacement each row gives distinct indices; categories of weight zero come
    only after all others. Returns int64 of shape (num_samples,) or (rows, num_samples).

    >>> import ember_tensor as torch
    >>> sorted(torch.multinomial(torch.tensor([0., 5., 0., 1.]), 2).tolist())
    [1, 3]
    """
    num_samples = _int_arg(num_samples, "multinomial", "num_samples", 2)
    if input.dim() not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if input._dtype.category != D._FLOAT:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{_iter.type_name(input._dtype)}")
    if out is not None and out._dtype is not D.int64:
        raise RuntimeError(f"multinomial expects Long tensor out, got: {_iter.type_name(out._dtype)}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    n_categories = input.shape[-1]
    if not replacement and num_samples > n_categories:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if n_categories > 1 << 24:
        raise RuntimeError("number of categories cannot exceed 2^24")
    gen = _random.resolve(generator, input._device, "multinomial")
    rows = input.shape[0] if input.dim() == 2 else 1
    probs = np.asarray(input._host_numpy(), np.float64).reshape(rows, n_categories)
    if probs.size == 0:
        samples = np.zeros((probs.shape[0], num_samples), np.int64)
    elif not replacement or num_samples == 1:
        samples = _sample_without_replacement(gen, probs, num_samples)
    else:
        samples = _sample_with_replacement(gen, probs, num_samples)
    if input.dim() == 1:
        samples = samples.reshape(num_samples)
    return _new_tensor(samples, D.int64, input._device, out=out)


def _sample_without_replacement(gen, probs, n):
    if not (np.isfinite(probs).all() and (probs >= 0).all()):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if (probs.sum(axis=1) == 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    # PyTorch's method (Gumbel top-k): the n largest p / q with q ~ Exp(1) are a draw
    # without replacement; zero weights get key 0 and so come last.
    q = gen._draw("standard_exponential", probs.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        keys = np.where(probs > 0, probs / q, 0.0)
    if n == 1:
        return np.argmax(keys, axis=1)[:, None]
    top = np.argpartition(-keys, n - 1, axis=1)[:, :n] if n < keys.shape[1] else \
        np.broadcast_to(np.arange(keys.shape[1]), keys.shape)
    order = np.argsort(-np.take_along_axis(keys, top, axis=1), axis=1, kind="stable")
    return np.take_along_axis(top, order, axis=1)


def _sample_with_replacement(gen, probs, n):
    if not (probs >= 0).all():
        raise RuntimeError("invalid multinomial distribution (encountering probability entry < 0)")
    if np.isinf(probs).any():
        raise RuntimeError(
            "invalid multinomial distribution (encountering probability entry = infinity or NaN)")
    totals = probs.sum(axis=1)
    if (totals <= 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    rows, n_categories = probs.shape
    cdf = np.cumsum(probs, axis=1) / totals[:, None]
    u = gen._draw("random", (rows, n))
    # Inverse CDF for all rows in one search: row r's CDF and draws are shifted by 2r so
    # no draw reaches another row. A zero-weight category repeats the CDF value before it
    # and so can never be found with side='right'.
    shift = 2.0 * np.arange(rows)[:, None]
    found = np.searchsorted((cdf + shift).ravel(), (u + shift).ravel(), side="right")
    found = found.reshape(rows, n) - (np.arange(rows) * n_categories)[:, None]
    # A draw past a row's last CDF value (rounding) takes its last non-zero category.
    last = n_categories - 1 - np.argmax(probs[:, ::-1] > 0, axis=1)
    return np.minimum(found, last[:, None])


@op()
def poisson(input, generator=None):
    """Poisson counts with rates `input` (a float tensor; the result has its dtype).

    >>> import ember_tensor as torch
    >>> torch.poisson(torch.zeros(3))
    tensor([0., 0., 0.])
    """
    _require_float(input._dtype, "poisson_cpu")
    rates = np.asarray(input._host_numpy(), np.float64)
    if not (rates >= 0).all():
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    gen = _random.resolve(generator, input._device, "poisson")
    huge = rates > _POISSON_MAX_RATE
    counts = gen._draw("poisson", np.where(huge, 0.0, rates))
    return _new_tensor(np.where(huge, rates, counts), input._dtype, input._device)


# -- *_like ------------------------------------------------------------------------------


@op()
def rand_like(input, *, generator=None, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    """`rand` with the shape (and by default dtype and device) of `input`.

    >>> import ember_tensor as torch
    >>> torch.rand_like(torch.zeros(2, dtype=torch.float64)).dtype
    torch.float64
    """
    shape, dtype, device, gen = _like(input, dtype, device, generator, "rand_like")
    _require_float(dtype, "check_uniform_bounds")
    return _new_tensor(_uniform(gen, shape, dtype), dtype, device, requires_grad)


@op()
def randn_like(input, *, generator=None, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None):
    """`randn` with the shape (and by default dtype and device) of `input`.

    >>> import ember_tensor as torch
    >>> torch.randn_like(torch.zeros(2, 3)).shape
    torch.Size([2, 3])
    """
    shape, dtype, device, gen = _like(input, dtype, device, generator, "randn_like")
    _require_float(dtype, "normal_kernel_cpu")
    return _new_tensor(_standard_normal(gen, shape, dtype), dtype, device, requires_grad)


@op()
def randint_like(input, low=None, high=None, *, generator=None, dtype=None, layout=None, device=None,
                 requires_grad=False, memory_format=None):
    """`randint` shaped like `input`: ``randint_like(x, high)`` or ``randint_like(x, low, high)``.

    >>> import ember_tensor as torch
    >>> torch.randint_like(torch.zeros(3), 1, 2)
    tensor([1., 1., 1.])
    """
    if high is None:
        low, high = 0, low
    if high is None:
        raise TypeError("randint_like() missing required argument 'high'")
    low = 0 if low is None else _int_arg(low, "randint_like", "low", 2)
    high = _int_arg(high, "randint_like", "high", 3)
    shape, dtype, device, gen = _like(input, dtype, device, generator, "randint_like")
    low, high = _random_range(dtype, low, high)
    values = gen._draw("integers", low, high, shape, dtype=np.int64, endpoint=True)
    return _new_tensor(values, dtype, device, requires_grad)


# -- in-place samplers ----------------------------------------------------------------------


@op("uniform_", inplace=True)
def uniform_(self, from_=0, to=1, *, generator=None, **kwargs):
    """Fill with uniform samples in [from, to) (``from`` may be passed as ``from_``).

    >>> import ember_tensor as torch
    >>> all(-2 <= v < 2 for v in torch.empty(100).uniform_(-2, 2).tolist())
    True
    """
    from_ = _pop_from(from_, kwargs, "uniform_")
    _require_float(self._dtype, "check_uniform_bounds")
    from_, to = _float_arg(from_, "uniform_", "from"), _float_arg(to, "uniform_", "to")
    limit, name = _FLOAT_MAX[self._dtype.name], _CPP_NAMES[self._dtype.name]
    for value, what in ((from_, "from"), (to, "to")):
        if not -limit <= value <= limit:
            raise RuntimeError(f"{what} is out of bounds for {name}")
    if from_ > to:
        raise RuntimeError(
            f"uniform_ expects to return a [from, to) range, but found from={from_:g} > to={to:g}")
    if to - from_ > limit:
        raise RuntimeError(
            f"uniform_ expects to-from <= std::numeric_limits<{_iter.type_name(self._dtype)}>::max(), "
            f"but found to={to:g} and from={from_:g} which result in to-from to exceed the limit")
    gen = _random.resolve(generator, self._device, "uniform_")
    return _store(self, _uniform(gen, tuple(self._data.shape), self._dtype) * (to - from_) + from_)


@op("normal_", inplace=True)
def normal_(self, mean=0, std=1, *, generator=None):
    """Fill with normal samples of mean `mean` and standard deviation `std`.

    >>> import ember_tensor as torch
    >>> torch.zeros(3).normal_(5., 0.).tolist()
    [5.0, 5.0, 5.0]
    """
    mean, std = _float_arg(mean, "normal_", "mean"), _float_arg(std, "normal_", "std")
    _check_std(std)
    _require_float(self._dtype, "normal_kernel_cpu")
    gen = _random.resolve(generator, self._device, "normal_")
    return _store(self, mean + std * _standard_normal(gen, tuple(self._data.shape), self._dtype))


@op("random_", inplace=True)
def random_(self, from_=_MISSING, to=_MISSING, *, generator=None, **kwargs):
    """Fill with integers uniform in [from, to): ``random_(to)``, ``random_(from, to)``.

    ``random_()`` spans the dtype: [0, max] for integers, [0, 2**mantissa_bits] for
    floats (every such integer is exact); ``random_(from, None)`` runs up to those bounds.

    >>> import ember_tensor as torch
    >>> torch.zeros(4, dtype=torch.int64).random_(7, 8).tolist()
    [7, 7, 7, 7]
    """
    if "from" in kwargs and to is _MISSING:
        raise TypeError("random_() received an invalid combination of arguments - got (from=int, ), "
                        "but expected (int from, int to, *, Generator generator)")
    from_ = _pop_from(from_, kwargs, "random_")
    if to is _MISSING:
        from_, to = (0, None) if from_ is _MISSING else (0, from_)
    elif from_ is _MISSING:
        from_ = 0
    from_ = _int_arg(from_, "random_", "from", 1)
    to = None if to is None else _int_arg(to, "random_", "to", 2)
    low, high = _random_range(self._dtype, from_, to)
    gen = _random.resolve(generator, self._device, "random_")
    return _store(self, gen._draw("integers", low, high, tuple(self._data.shape), dtype=np.int64,
                                  endpoint=True))


@op("bernoulli_", inplace=True)
def bernoulli_(self, p=0.5, *, generator=None):
    """Fill with 1 with probability `p` (a number, or a tensor broadcastable to self), else 0.

    >>> import ember_tensor as torch
    >>> torch.empty(2, 2).bernoulli_(torch.tensor([0., 1.]))
    tensor([[0., 1.],
            [0., 1.]])
    """
    shape = tuple(self._data.shape)
    if isinstance(p, Tensor):
        views.expand.impl(p, shape)  # PyTorch's error when p cannot broadcast to self
        p = np.broadcast_to(np.asarray(p._host_numpy(), np.float64), shape)
        _check_probabilities(p)
    else:
        p = _float_arg(p, "bernoulli_", "p")
        _check_p(p)
    gen = _random.resolve(generator, self._device, "bernoulli_")
    return _store(self, gen._draw("random", shape) < p)


@op("exponential_", inplace=True)
def exponential_(self, lambd=1, *, generator=None):
    """Fill with exponential samples of rate `lambd` (mean 1 / lambd).

    >>> import ember_tensor as torch
    >>> min(torch.empty(10).exponential_(2.).tolist()) >= 0
    True
    """
    lambd = _float_arg(lambd, "exponential_", "lambd")
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    if self._dtype.category != D._FLOAT:
        raise RuntimeError("Exponential distribution is a continuous probability distribution. "
                           f"dtype must be a floating point but you specified {_iter.type_name(self._dtype)}")
    gen = _random.resolve(generator, self._device, "exponential_")
    shape, compute = tuple(self._data.shape), _compute_type(self._dtype)
    return _store(self, gen._draw("standard_exponential", shape, dtype=compute) / lambd)


@op("geometric_", inplace=True)
def geometric_(self, p, *, generator=None):
    """Fill with the number of Bernoulli(p) trials up to the first success (1, 2, ...).

    >>> import ember_tensor as torch
    >>> min(torch.empty(10, dtype=torch.int64).geometric_(0.5).tolist()) >= 1
    True
    """
    p = _float_arg(p, "geometric_", "p")
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p:g}")
    if self._dtype is D.bool:
        raise NotImplementedError("\"geometric_cpu\" not implemented for 'Bool'")
    gen = _random.resolve(generator, self._device, "geometric_")
    return _store(self, gen._draw("geometric", p, tuple(self._data.shape)))


@op("log_normal_", inplace=True)
def log_normal_(self, mean=1, std=2, *, generator=None):
    """Fill with exp(x) for x normal with mean `mean` and standard deviation `std`.

    >>> import ember_tensor as torch
    >>> min(torch.empty(10).log_normal_().tolist()) > 0
    True
    """
    mean, std = _float_arg(mean, "log_normal_", "mean"), _float_arg(std, "log_normal_", "std")
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std:g}")
    _require_float(self._dtype, "log_normal_cpu")
    gen = _random.resolve(generator, self._device, "log_normal_")
    z = _standard_normal(gen, tuple(self._data.shape), self._dtype)
    return _store(self, np.exp(mean + std * z))


@op("cauchy_", inplace=True)
def cauchy_(self, median=0, sigma=1, *, generator=None):
    """Fill with Cauchy samples: median + sigma * tan(pi * (u - 1/2)), u uniform in [0, 1).

    >>> import ember_tensor as torch
    >>> torch.empty(3, dtype=torch.float64).cauchy_().dtype
    torch.float64
    """
    median = _float_arg(median, "cauchy_", "median")
    sigma = _float_arg(sigma, "cauchy_", "sigma")
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma:g}")
    if self._dtype.category != D._FLOAT:
        raise RuntimeError("Cauchy distribution is a continuous probability distribution. "
                           f"dtype must be a floating point but you specified {_CPP_NAMES[self._dtype.name]}")
    gen = _random.resolve(generator, self._device, "cauchy_")
    u = _uniform(gen, tuple(self._data.shape), self._dtype).astype(np.float64)
    return _store(self, median + sigma * np.tan(np.pi * (u - 0.5)))
