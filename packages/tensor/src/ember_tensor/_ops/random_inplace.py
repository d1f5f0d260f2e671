"""In-place samplers: uniform_, normal_, random_, bernoulli_, exponential_, geometric_,
log_normal_, cauchy_ (Tensor methods, as in PyTorch).

Device-free: each checks its arguments with PyTorch's errors, then fills the tensor with
a sampler of its device's backend (`_backends.<device>.random`): on the CPU from the CPU
generator's NumPy stream, on CUDA by Philox kernels from the CUDA generator (no values
cross to the host, and the numbers differ from the CPU's for a seed; see `_random`).
"""
import numpy as np

from .. import _dtype as D
from .. import _random
from .._dispatch import op
from .._tensor import Tensor
from . import _iter, views
from ._kernel_names import kernel_name
from ._random_args import (
    CPP_NAMES, FLOAT_MAX, MISSING, check_p, check_probabilities, check_std, fill, float_arg, int_arg, pop_from,
    random_backend, random_range, real_parts, refuse_complex, require_float,
)

__all__ = ["uniform_", "normal_", "random_", "bernoulli_", "exponential_", "geometric_", "log_normal_",
           "cauchy_"]


@op("uniform_", inplace=True)
def uniform_(self, from_=0, to=1, *, generator=None, **kwargs):
    """Fill with uniform samples in [from, to) (``from`` may be passed as ``from_``).

    >>> import ember_tensor as torch
    >>> all(-2 <= v < 2 for v in torch.empty(100).uniform_(-2, 2).tolist())
    True
    """
    from_ = pop_from(from_, kwargs, "uniform_")
    if self._dtype.category == D._COMPLEX:
        # PyTorch fills both parts of a complex tensor with uniform samples in [from, to).
        uniform_.impl(real_parts(self), from_, to, generator=generator)
        return self
    require_float(self._dtype, "check_uniform_bounds")
    from_, to = float_arg(from_, "uniform_", "from"), float_arg(to, "uniform_", "to")
    limit, name = FLOAT_MAX[self._dtype.name], CPP_NAMES[self._dtype.name]
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
    return fill(self, random_backend(self._device).uniform, gen, from_, to)


@op("normal_", inplace=True)
def normal_(self, mean=0, std=1, *, generator=None):
    """Fill with normal samples of mean `mean` and standard deviation `std`.

    >>> import ember_tensor as torch
    >>> torch.zeros(3).normal_(5., 0.).tolist()
    [5.0, 5.0, 5.0]
    """
    mean, std = float_arg(mean, "normal_", "mean"), float_arg(std, "normal_", "std")
    check_std(std)
    if self._dtype.category == D._COMPLEX:
        # Both parts normal with mean `mean` and std / sqrt(2): the variance of z is std**2.
        normal_.impl(real_parts(self), mean, std * 0.5 ** 0.5, generator=generator)
        return self
    require_float(self._dtype, "normal_kernel_cpu", self)
    gen = _random.resolve(generator, self._device, "normal_")
    return fill(self, random_backend(self._device).normal, gen, mean, std)


@op("random_", inplace=True)
def random_(self, from_=MISSING, to=MISSING, *, generator=None, **kwargs):
    """Fill with integers uniform in [from, to): ``random_(to)``, ``random_(from, to)``.

    ``random_()`` spans the dtype: [0, max] for integers, [0, 2**mantissa_bits] for
    floats (every such integer is exact); ``random_(from, None)`` runs up to those bounds.

    >>> import ember_tensor as torch
    >>> torch.zeros(4, dtype=torch.int64).random_(7, 8).tolist()
    [7, 7, 7, 7]
    """
    if "from" in kwargs and to is MISSING:
        raise TypeError("random_() received an invalid combination of arguments - got (from=int, ), "
                        "but expected (int from, int to, *, Generator generator)")
    from_ = pop_from(from_, kwargs, "random_")
    if from_ is MISSING and to is MISSING:
        refuse_complex(self._dtype, "random_kernel_cpu", self)
    if to is MISSING:
        from_, to = (0, None) if from_ is MISSING else (0, from_)
    elif from_ is MISSING:
        from_ = 0
    from_ = int_arg(from_, "random_", "from", 1)
    to = None if to is None else int_arg(to, "random_", "to", 2)
    low, high = random_range(self._dtype, from_, to)
    gen = _random.resolve(generator, self._device, "random_")
    return fill(self, random_backend(self._device).integers, gen, low, high)


@op("bernoulli_", inplace=True)
def bernoulli_(self, p=0.5, *, generator=None):
    """Fill with 1 with probability `p` (a number, or a tensor broadcastable to self), else 0.

    >>> import ember_tensor as torch
    >>> torch.empty(2, 2).bernoulli_(torch.tensor([0., 1.]))
    tensor([[0., 1.],
            [0., 1.]])
    """
    shape, sampler = tuple(self._data.shape), random_backend(self._device)
    refuse_complex(self._dtype, "bernoulli_tensor_cpu_self_" if isinstance(p, Tensor) else "bernoulli_scalar_cpu_")
    if isinstance(p, Tensor):
        views.expand.impl(p, shape)  # PyTorch's error when p cannot broadcast to self
        # On CUDA one flag is read back: PyTorch's kernel asserts there instead.
        probabilities, bad = sampler.checked_float64(p.to(self._device)._data, shape, 0.0, 1.0)
        if bad:
            check_probabilities(np.array([np.nan]))  # raises PyTorch's error
        gen = _random.resolve(generator, self._device, "bernoulli_")
        return fill(self, sampler.bernoulli_tensor, gen, probabilities)
    p = float_arg(p, "bernoulli_", "p")
    check_p(p)
    gen = _random.resolve(generator, self._device, "bernoulli_")
    return fill(self, sampler.bernoulli_scalar, gen, p)


@op("exponential_", inplace=True)
def exponential_(self, lambd=1, *, generator=None):
    """Fill with exponential samples of rate `lambd` (mean 1 / lambd).

    >>> import ember_tensor as torch
    >>> min(torch.empty(10).exponential_(2.).tolist()) >= 0
    True
    """
    lambd = float_arg(lambd, "exponential_", "lambd")
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    if self._dtype.category != D._FLOAT:
        raise RuntimeError("Exponential distribution is a continuous probability distribution. "
                           f"dtype must be a floating point but you specified {_iter.type_name(self._dtype)}")
    gen = _random.resolve(generator, self._device, "exponential_")
    return fill(self, random_backend(self._device).exponential, gen, lambd)


@op("geometric_", inplace=True)
def geometric_(self, p, *, generator=None):
    """Fill with the number of Bernoulli(p) trials up to the first success (1, 2, ...).

    >>> import ember_tensor as torch
    >>> min(torch.empty(10, dtype=torch.int64).geometric_(0.5).tolist()) >= 1
    True
    """
    p = float_arg(p, "geometric_", "p")
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p:g}")
    if self._dtype is D.bool:
        raise NotImplementedError(f"\"{kernel_name('geometric_cpu', self)}\" not implemented for 'Bool'")
    refuse_complex(self._dtype, "geometric_cpu", self)
    gen = _random.resolve(generator, self._device, "geometric_")
    return fill(self, random_backend(self._device).geometric, gen, p)


@op("log_normal_", inplace=True)
def log_normal_(self, mean=1, std=2, *, generator=None):
    """Fill with exp(x) for x normal with mean `mean` and standard deviation `std`.

    >>> import ember_tensor as torch
    >>> min(torch.empty(10).log_normal_().tolist()) > 0
    True
    """
    mean, std = float_arg(mean, "log_normal_", "mean"), float_arg(std, "log_normal_", "std")
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std:g}")
    require_float(self._dtype, "log_normal_cpu", self)
    gen = _random.resolve(generator, self._device, "log_normal_")
    return fill(self, random_backend(self._device).log_normal, gen, mean, std)


@op("cauchy_", inplace=True)
def cauchy_(self, median=0, sigma=1, *, generator=None):
    """Fill with Cauchy samples: median + sigma * tan(pi * (u - 1/2)), u uniform in [0, 1).

    >>> import ember_tensor as torch
    >>> torch.empty(3, dtype=torch.float64).cauchy_().dtype
    torch.float64
    """
    median = float_arg(median, "cauchy_", "median")
    sigma = float_arg(sigma, "cauchy_", "sigma")
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma:g}")
    if self._dtype.category != D._FLOAT:
        raise RuntimeError("Cauchy distribution is a continuous probability distribution. "
                           f"dtype must be a floating point but you specified {CPP_NAMES[self._dtype.name]}")
    gen = _random.resolve(generator, self._device, "cauchy_")
    return fill(self, random_backend(self._device).cauchy, gen, median, sigma)