"""Random sampling: rand/randn/randint/randperm, normal, bernoulli, multinomial, poisson
and the *_like forms; the in-place samplers (uniform_, normal_, random_, bernoulli_,
exponential_, geometric_, log_normal_, cauchy_) live in `random_inplace` and are
re-exported here.

Device-free: every op checks its arguments with PyTorch's errors, resolves its
`Generator` (``generator=``, else the default one of the output's device), then runs a
sampler of its device's backend (`_backends.<device>.random`) with the generator's
stream. On the CPU: NumPy's PCG64 on the host, float32 directly where the tensor is not
float64. On CUDA: the Philox kernels on the GPU, with no copy to or from the host; a
seed then gives other numbers than on the CPU (PyTorch does not promise equal ones
either), reproducible for that seed. Neither gives PyTorch's values (other engines),
only PyTorch's distributions, dtypes, shapes and error messages.
"""
import numpy as np

from .. import _dtype as D
from .. import _random
from .._dispatch import op
from .._tensor import Tensor
from . import _iter
from .elementwise import add, copy_to_out, mul
from ._random_args import (
    MISSING, check_p, check_probabilities, check_std, factory, float_arg, int_arg, like, new_tensor,
    random_backend, random_range, refuse_complex, require_float, require_float_or_complex, sample, sample_complex,
)
from .multinomial import multinomial  # noqa: F401 - re-exported: ember_tensor and methods.py look here
from .random_inplace import (  # noqa: F401 - Tensor methods, found here by methods.py
    bernoulli_, cauchy_, exponential_, geometric_, log_normal_, normal_, random_, uniform_,
)

__all__ = ["rand", "randn", "randint", "randperm", "normal", "bernoulli", "multinomial", "poisson",
           "rand_like", "randn_like", "randint_like", "uniform_", "normal_", "random_", "bernoulli_",
           "exponential_", "geometric_", "log_normal_", "cauchy_"]

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
    require_float_or_complex(dtype, "check_uniform_bounds")
    draw = sample_complex if dtype.category == D._COMPLEX else sample
    return draw(random_backend(device).uniform, gen, shape, dtype, device, 0.0, 1.0,
                requires_grad=requires_grad, out=out)


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
    return _normal_samples(gen, shape, dtype, device, 0.0, 1.0, requires_grad, out)


def _normal_samples(gen, shape, dtype, device, mean, std, requires_grad=False, out=None):
    """Normal samples of `dtype`. As PyTorch, a complex sample's parts are independent
    normal samples of mean `mean` and standard deviation std / sqrt(2) (so the variance of
    z is std**2)."""
    if dtype.category == D._COMPLEX:
        return sample_complex(random_backend(device).normal, gen, shape, dtype, device, mean, std * 0.5 ** 0.5,
                              requires_grad=requires_grad, out=out)
    require_float(dtype, "normal_kernel_cpu", device)
    return sample(random_backend(device).normal, gen, shape, dtype, device, mean, std,
                  requires_grad=requires_grad, out=out)


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
    if high is None and low is not None:  # randint(high, size=...): the bound came first
        low, high, position = 0, low, 2
    elif size is None and low is not None:  # the two-argument form randint(high, size)
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
    return sample(random_backend(device).integers, gen, shape, dtype, device, low, high,
                  requires_grad=requires_grad, out=out)


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
    refuse_complex(dtype, "randperm")
    if dtype is D.float16 and n > 2049:
        raise RuntimeError("n cannot be greater than 2049 for Half type.")
    if dtype.category == D._INT and n - 1 > np.iinfo(dtype.np).max:
        raise RuntimeError(f"value cannot be converted to type {dtype.name}_t without overflow")
    order = gen._sample(random_backend(device).permutation, n)
    return new_tensor(order, dtype, device, requires_grad, out)


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
        return _normal_samples(gen, shape, dtype, device, mean, std, requires_grad, out)
    if size is not None or dtype is not None or device is not None or requires_grad:
        raise TypeError("normal() received an invalid combination of arguments: size, dtype, device "
                        "and requires_grad are only accepted by normal(float mean, float std, size)")
    if std is MISSING:
        std = 1.0
    if std_is_tensor:
        if std._dtype.category == D._COMPLEX:
            raise RuntimeError("normal expects standard deviation to be non-complex")
        if _has_negative(std):
            raise RuntimeError("normal expects all elements of std >= 0.0")
    else:
        std = float_arg(std, "normal", "std")
        check_std(std)
    result_dtype = mean._dtype if mean_is_tensor else std._dtype
    require_float_or_complex(result_dtype, "normal_kernel_cpu", mean, std)
    shape = _iter.broadcast_shapes(tuple(mean.shape) if mean_is_tensor else (),
                                   tuple(std.shape) if std_is_tensor else ())
    device = _iter.common_device((mean, std))
    gen = _random.resolve(generator, device, "normal")
    if result_dtype.category == D._COMPLEX:
        # PyTorch's complex form: standard complex normal samples, scaled by std and
        # shifted by the (complex) mean.
        noise = _normal_samples(gen, shape, result_dtype, device, 0.0, 1.0)
        return copy_to_out(add.impl(mul.impl(noise, std), mean), out)
    return sample(random_backend(device).normal_tensors, gen, shape, result_dtype, device,
                  mean._data if mean_is_tensor else float(mean), std._data if std_is_tensor else std, out=out)


def _has_negative(std):
    """Whether tensor `std` holds a negative or NaN value (on CUDA: one flag read back)."""
    return random_backend(std._device).checked_float64(std._data, tuple(std._data.shape), 0.0, np.inf)[1]


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
    shape, sampler = tuple(input._data.shape), random_backend(input._device)
    refuse_complex(input._dtype, "bernoulli_tensor_cpu_self_" if p is None else "bernoulli_scalar_cpu_")
    if p is not None:
        p = float_arg(p, "bernoulli", "p")
        check_p(p)
        return sample(sampler.bernoulli_scalar, gen, shape, input._dtype, input._device, p, out=out)
    require_float(input._dtype, "bernoulli_tensor_cpu_p_")
    probabilities, bad = sampler.checked_float64(input._data, shape, 0.0, 1.0)
    if bad:
        check_probabilities(np.array([np.nan]))  # raises PyTorch's error
    return sample(sampler.bernoulli_tensor, gen, shape, input._dtype, input._device, probabilities, out=out)


@op()
def poisson(input, generator=None):
    """Poisson counts with rates `input` (a float tensor; the result has its dtype).

    >>> import ember_tensor as torch
    >>> torch.poisson(torch.zeros(3))
    tensor([0., 0., 0.])
    """
    require_float(input._dtype, "poisson_cpu", input)
    shape, sampler = tuple(input._data.shape), random_backend(input._device)
    rates, negative = sampler.checked_float64(input._data, shape, 0.0, np.inf)
    if negative:
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    gen = _random.resolve(generator, input._device, "poisson")
    counts = gen._sample(sampler.poisson, rates, shape, input._dtype.np)
    return Tensor._wrap(counts, input._dtype, input._device)


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
    require_float_or_complex(dtype, "check_uniform_bounds")
    draw = sample_complex if dtype.category == D._COMPLEX else sample
    return draw(random_backend(device).uniform, gen, shape, dtype, device, 0.0, 1.0, requires_grad=requires_grad)


@op()
def randn_like(input, *, generator=None, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None):
    """`randn` with the shape (and by default dtype and device) of `input`.

    >>> import ember_tensor as torch
    >>> torch.randn_like(torch.zeros(2, 3)).shape
    torch.Size([2, 3])
    """
    shape, dtype, device, gen = like(input, dtype, device, generator, "randn_like")
    return _normal_samples(gen, shape, dtype, device, 0.0, 1.0, requires_grad)


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
    return sample(random_backend(device).integers, gen, shape, dtype, device, low, high, requires_grad=requires_grad)
