"""Random sampling: rand/randn/randint/randperm, normal, bernoulli, multinomial, poisson
and the *_like forms; the in-place samplers (uniform_, normal_, random_, bernoulli_,
exponential_, geometric_, log_normal_, cauchy_) live in `random_inplace` and are
re-exported here.

Every op draws from a `Generator` (``generator=``, else the default one of the output's
device). On the CPU: on the host with NumPy's PCG64, float32 directly where the tensor
is not float64. On CUDA: on the GPU, by the Philox kernels of `_backends.cuda.random`, with no
copy to or from the host; a seed then gives other numbers than on the CPU (PyTorch does
not promise equal ones either), reproducible for that seed. Neither gives PyTorch's
values (other engines), only PyTorch's distributions, dtypes, shapes and error messages.

`randperm` on CUDA sorts random 64-bit keys on the device; `multinomial` (in its own
module) and `poisson` (Knuth's method or PTRS rejection, a stream of counters per
element) sample there too: nothing random goes through the host for CUDA tensors.
"""
import numpy as np

from .. import _backends
from .. import _dtype as D
from .. import _random
from .._dispatch import op
from .._tensor import Tensor
from . import _iter, sorting
from ._random_args import (
    MISSING, check_p, check_probabilities, check_std, compute_type, empty_output, factory, float_arg,
    int_arg, like, new_tensor, random_range, require_float, standard_normal, uniform,
)
from .multinomial import multinomial  # noqa: F401 - re-exported: ember_tensor and methods.py look here
from .random_inplace import (  # noqa: F401 - Tensor methods, found here by methods.py
    bernoulli_, cauchy_, exponential_, geometric_, log_normal_, normal_, random_, uniform_,
)

__all__ = ["rand", "randn", "randint", "randperm", "normal", "bernoulli", "multinomial", "poisson",
           "rand_like", "randn_like", "randint_like", "uniform_", "normal_", "random_", "bernoulli_",
           "exponential_", "geometric_", "log_normal_", "cauchy_"]

# NumPy's Poisson sampler refuses rates near 2**63; such counts equal their rate to
# within float precision anyway.
_POISSON_MAX_RATE = 1e18


def _cuda_random():
    # Imported on the first CUDA sample: it loads numba.cuda, which CPU-only use never needs.
    from .._backends.cuda import random as _cuda_random
    return _cuda_random


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
    shape, dtype, device, gen = factory("rand", args, size, out, dtype, device, generator,
                                        D.get_default_dtype())
    require_float(dtype, "check_uniform_bounds")
    if device.type == "cuda":
        return _cuda_random().uniform_(empty_output(shape, dtype, device, requires_grad, out), gen, 0.0, 1.0)
    return new_tensor(uniform(gen, shape, dtype), dtype, device, requires_grad, out)


@op()
def randn(*args, size=None, generator=None, out=None, dtype=None, layout=None, device=None,
          requires_grad=False, pin_memory=False):
    """Standard normal samples (mean 0, variance 1): ``randn(2, 3)``.

    >>> import ember_tensor as torch
    >>> torch.randn(4, dtype=torch.float64).dtype
    torch.float64
    """
    shape, dtype, device, gen = factory("randn", args, size, out, dtype, device, generator,
                                        D.get_default_dtype())
    require_float(dtype, "normal_kernel_cpu", device)
    if device.type == "cuda":
        return _cuda_random().normal_(empty_output(shape, dtype, device, requires_grad, out), gen, 0.0, 1.0)
    return new_tensor(standard_normal(gen, shape, dtype), dtype, device, requires_grad, out)


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
    low = 0 if low is None else int_arg(low, "randint", "low", 1)
    high = int_arg(high, "randint", "high", position - 1)
    shape, dtype, device, gen = factory("randint", (), size, out, dtype, device, generator, D.int64)
    low, high = random_range(dtype, low, high)
    if device.type == "cuda":
        return _cuda_random().integers_(empty_output(shape, dtype, device, requires_grad, out), gen, low, high)
    values = gen._draw("integers", low, high, shape, dtype=np.int64, endpoint=True)
    return new_tensor(values, dtype, device, requires_grad, out)


@op()
def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
    """A random permutation of 0 .. n-1 (int64 unless `dtype` says otherwise).

    >>> import ember_tensor as torch
    >>> sorted(torch.randperm(5).tolist())
    [0, 1, 2, 3, 4]
    """
    n = int_arg(n, "randperm", "n", 1)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    _, dtype, device, gen = factory("randperm", (), (), out, dtype, device, generator, D.int64)
    if dtype is D.bool:
        raise NotImplementedError("\"randperm\" not implemented for 'Bool'")
    if dtype is D.float16 and n > 2049:
        raise RuntimeError("n cannot be greater than 2049 for Half type.")
    if dtype.category == D._INT and n - 1 > np.iinfo(dtype.np).max:
        raise RuntimeError(f"value cannot be converted to type {dtype.name}_t without overflow")
    if device.type == "cuda":
        return _randperm_on_device(n, dtype, device, gen, requires_grad, out)
    return new_tensor(gen._draw("permutation", n), dtype, device, requires_grad, out)


def _randperm_on_device(n, dtype, device, gen, requires_grad, out):
    """randperm on CUDA, as PyTorch's: sort random 64-bit keys on the device and keep the
    order. Equal keys (probability about n**2 / 2**65) keep index order: a tiny bias."""
    keys = empty_output((n,), D.int64, device)
    _cuda_random().integers_(keys, gen, -(1 << 63), (1 << 63) - 1)
    order = sorting.argsort.impl(keys, stable=True)
    if out is None and dtype is D.int64 and not requires_grad:
        return order
    result = empty_output((n,), dtype, device, requires_grad, out)
    _backends.get(device).storage.copy_(result._data, order._data)
    result._bump_version()
    return result


@op()
def normal(mean, std=MISSING, size=None, *, generator=None, out=None, dtype=None, layout=None,
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
        if std is MISSING or size is None:
            got = ", ".join(type(v).__name__ for v in (mean, std) if v is not MISSING)
            raise TypeError(f"normal() received an invalid combination of arguments - got ({got}), "
                            "but expected (float mean, float std, tuple of ints size, ...)")
        mean, std = float_arg(mean, "normal", "mean"), float_arg(std, "normal", "std")
        check_std(std)
        shape, dtype, device, gen = factory("normal", (), size, out, dtype, device, generator,
                                            D.get_default_dtype())
        require_float(dtype, "normal_kernel_cpu", device)
        if device.type == "cuda":
            return _cuda_random().normal_(empty_output(shape, dtype, device, requires_grad, out), gen, mean, std)
        values = mean + std * standard_normal(gen, shape, dtype)
        return new_tensor(values, dtype, device, requires_grad, out)
    if size is not None or dtype is not None or device is not None or requires_grad:
        raise TypeError("normal() received an invalid combination of arguments: size, dtype, device "
                        "and requires_grad are only accepted by normal(float mean, float std, size)")
    if std is MISSING:
        std = 1.0
    if std_is_tensor:
        if _has_negative(std):
            raise RuntimeError("normal expects all elements of std >= 0.0")
    else:
        std = float_arg(std, "normal", "std")
        check_std(std)
    result_dtype = mean._dtype if mean_is_tensor else std._dtype
    require_float(result_dtype, "normal_kernel_cpu", mean, std)
    shape = _iter.broadcast_shapes(tuple(mean.shape) if mean_is_tensor else (),
                                   tuple(std.shape) if std_is_tensor else ())
    device = _iter.common_device((mean, std))
    gen = _random.resolve(generator, device, "normal")
    if device.type == "cuda":
        return _cuda_random().normal_tensors(empty_output(shape, result_dtype, device, out=out), gen,
                                             mean._data if mean_is_tensor else float(mean),
                                             std._data if std_is_tensor else std)
    compute = compute_type(result_dtype)
    mean_values = mean._host_numpy().astype(compute) if mean_is_tensor else float(mean)
    std_values = std._host_numpy().astype(compute) if std_is_tensor else std
    values = mean_values + std_values * standard_normal(gen, shape, result_dtype)
    return new_tensor(values, result_dtype, device, out=out)


def _has_negative(std):
    """Whether tensor `std` holds a negative or NaN value (on CUDA: checked on the device)."""
    if std._device.type == "cuda":
        return _cuda_random().checked_float64(std, tuple(std._data.shape), 0.0, np.inf)[1]
    return not (np.asarray(std._host_numpy(), np.float64) >= 0).all()


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
    if input._device.type == "cuda":
        return _bernoulli_on_device(input, p, gen, out)
    if p is None:
        require_float(input._dtype, "bernoulli_tensor_cpu_p_")
        p = np.asarray(input._host_numpy(), np.float64)
        check_probabilities(p)
    else:
        p = float_arg(p, "bernoulli", "p")
        check_p(p)
    values = gen._draw("random", tuple(input._data.shape)) < p
    return new_tensor(values, input._dtype, input._device, out=out)


def _bernoulli_on_device(input, p, gen, out):
    """bernoulli() of a CUDA tensor: checked and sampled on the device."""
    cuda_random = _cuda_random()
    result = empty_output(tuple(input._data.shape), input._dtype, input._device, out=out)
    if p is not None:
        p = float_arg(p, "bernoulli", "p")
        check_p(p)
        return cuda_random.bernoulli_scalar_(result, gen, p)
    require_float(input._dtype, "bernoulli_tensor_cpu_p_")
    probabilities, bad = cuda_random.checked_float64(input, tuple(input._data.shape), 0.0, 1.0)
    if bad:
        check_probabilities(np.array([np.nan]))  # raises PyTorch's error
    return cuda_random.bernoulli_tensor_(result, gen, probabilities)


@op()
def poisson(input, generator=None):
    """Poisson counts with rates `input` (a float tensor; the result has its dtype).

    >>> import ember_tensor as torch
    >>> torch.poisson(torch.zeros(3))
    tensor([0., 0., 0.])
    """
    require_float(input._dtype, "poisson_cpu", input)
    if input._device.type == "cuda":
        return _poisson_on_device(input, generator)
    rates = np.asarray(input._host_numpy(), np.float64)
    if not (rates >= 0).all():
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    gen = _random.resolve(generator, input._device, "poisson")
    huge = rates > _POISSON_MAX_RATE
    counts = gen._draw("poisson", np.where(huge, 0.0, rates))
    return new_tensor(np.where(huge, rates, counts), input._dtype, input._device)


def _poisson_on_device(input, generator):
    cuda_random = _cuda_random()
    shape = tuple(input._data.shape)
    rates, negative = cuda_random.checked_float64(input, shape, 0.0, np.inf)
    if negative:
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    gen = _random.resolve(generator, input._device, "poisson")
    return cuda_random.poisson(empty_output(shape, input._dtype, input._device), rates, gen)


# -- *_like ------------------------------------------------------------------------------


@op()
def rand_like(input, *, generator=None, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    """`rand` with the shape (and by default dtype and device) of `input`.

    >>> import ember_tensor as torch
    >>> torch.rand_like(torch.zeros(2, dtype=torch.float64)).dtype
    torch.float64
    """
    shape, dtype, device, gen = like(input, dtype, device, generator, "rand_like")
    require_float(dtype, "check_uniform_bounds")
    if device.type == "cuda":
        return _cuda_random().uniform_(empty_output(shape, dtype, device, requires_grad), gen, 0.0, 1.0)
    return new_tensor(uniform(gen, shape, dtype), dtype, device, requires_grad)


@op()
def randn_like(input, *, generator=None, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None):
    """`randn` with the shape (and by default dtype and device) of `input`.

    >>> import ember_tensor as torch
    >>> torch.randn_like(torch.zeros(2, 3)).shape
    torch.Size([2, 3])
    """
    shape, dtype, device, gen = like(input, dtype, device, generator, "randn_like")
    require_float(dtype, "normal_kernel_cpu", device)
    if device.type == "cuda":
        return _cuda_random().normal_(empty_output(shape, dtype, device, requires_grad), gen, 0.0, 1.0)
    return new_tensor(standard_normal(gen, shape, dtype), dtype, device, requires_grad)


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
    low = 0 if low is None else int_arg(low, "randint_like", "low", 2)
    high = int_arg(high, "randint_like", "high", 3)
    shape, dtype, device, gen = like(input, dtype, device, generator, "randint_like")
    low, high = random_range(dtype, low, high)
    if device.type == "cuda":
        return _cuda_random().integers_(empty_output(shape, dtype, device, requires_grad), gen, low, high)
    values = gen._draw("integers", low, high, shape, dtype=np.int64, endpoint=True)
    return new_tensor(values, dtype, device, requires_grad)
