"""Sampling into complex tensors, as PyTorch 2.13 does it: rand/uniform_ draw both parts
uniformly, randn/normal_/normal draw both parts normal with std / sqrt(2) (so z's variance
is std**2), and the samplers of real values only refuse complex with PyTorch's errors.

Values are ember's own stream (not PyTorch's): distributions are checked on seeded samples
with tolerances of about five standard errors."""
import numpy as np
import pytest

import ember_tensor as torch
from cuda_guard import DEVICES
from random_cases import N, assert_close, gen


def sample_size(device):
    """(n, widen): the sample size on `device` and how much wider the tolerances are than
    at N (the CUDA simulator runs a kernel a thread at a time: fewer samples there)."""
    n = N if device == "cpu" else 4096
    return n, (N / n) ** 0.5


def device_gen(seed, device):
    """A new Generator of `device` seeded with `seed`."""
    return torch.Generator(device=device).manual_seed(seed)


def parts(t):
    """(real, imag) float64 NumPy arrays of complex tensor `t`."""
    z = np.asarray(t.detach().cpu().numpy(), np.complex128)
    return z.real, z.imag


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
@pytest.mark.parametrize("make", ["rand", "rand_like", "uniform_"])
def test_uniform_samples_fill_both_parts(make, dtype, device):
    n, widen = sample_size(device)
    if make == "rand":
        z = torch.rand(n, dtype=dtype, device=device, generator=device_gen(1, device))
    elif make == "rand_like":
        z = torch.rand_like(torch.zeros(n, dtype=dtype, device=device), generator=device_gen(1, device))
    else:
        z = torch.zeros(n, dtype=dtype, device=device).uniform_(-1, 3, generator=device_gen(1, device))
    assert z.dtype is dtype and z.shape == (n,)
    low, high = (-1, 3) if make == "uniform_" else (0, 1)
    for part in parts(z):
        assert part.min() >= low and part.max() < high
        assert_close(part.mean(), (low + high) / 2, 0.01 * (high - low) * widen)
        assert_close(part.var(), (high - low) ** 2 / 12, 0.005 * (high - low) ** 2 * widen)
    re, im = parts(z)
    assert abs(np.corrcoef(re, im)[0, 1]) < 0.015 * widen  # the parts are independent draws


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
@pytest.mark.parametrize("make", ["randn", "randn_like", "normal_", "normal"])
def test_normal_samples_split_the_variance_between_the_parts(make, dtype, device):
    n, widen = sample_size(device)
    mean, std = (1.0, 2.0) if make in ("normal_", "normal") else (0.0, 1.0)
    if make == "randn":
        z = torch.randn(n, dtype=dtype, device=device, generator=device_gen(2, device))
    elif make == "randn_like":
        z = torch.randn_like(torch.zeros(n, dtype=dtype, device=device), generator=device_gen(2, device))
    elif make == "normal_":
        z = torch.zeros(n, dtype=dtype, device=device).normal_(mean, std, generator=device_gen(2, device))
    else:
        z = torch.normal(mean, std, (n,), dtype=dtype, device=device, generator=device_gen(2, device))
    assert z.dtype is dtype
    for part in parts(z):
        assert_close(part.mean(), mean, 0.015 * std * widen)
        assert_close(part.var(), std ** 2 / 2, 0.015 * std ** 2 * widen)


def test_degenerate_ranges_give_exact_values_in_both_parts():
    assert torch.zeros(3, dtype=torch.complex64).normal_(5., 0.).tolist() == [5 + 5j] * 3
    assert torch.zeros(3, dtype=torch.complex128).uniform_(2., 2.).tolist() == [2 + 2j] * 3
    # A non-contiguous tensor is filled through its own strides.
    t = torch.zeros(2, 3, dtype=torch.complex128).t().uniform_(1., 1.)
    assert t.shape == (3, 2) and t.tolist() == [[1 + 1j] * 2] * 3
    assert torch.normal(3., 0., (2,), dtype=torch.complex128).tolist() == [3 + 3j] * 2


def test_normal_with_a_complex_mean_tensor():
    mean = torch.tensor([1 + 2j, -3j], dtype=torch.complex64)
    assert torch.normal(mean, torch.zeros(2)).tolist() == mean.tolist()
    z = torch.normal(torch.full((N,), 1 + 1j, dtype=torch.complex128), 2.0, generator=gen(4))
    assert z.dtype is torch.complex128
    for part in parts(z):
        assert_close(part.mean(), 1.0, 0.03)
        assert_close(part.var(), 2.0, 0.03)


def test_out_requires_grad_and_complex32():
    out = torch.empty(1, dtype=torch.complex128)
    result = torch.rand(4, dtype=torch.complex128, out=out, generator=gen(5))
    assert result is out and out.shape == (4,)
    re, im = parts(out)
    assert (re >= 0).all() and (re < 1).all() and (im >= 0).all() and (im < 1).all() and len(set(re)) == 4
    assert torch.randn(3, dtype=torch.complex64, requires_grad=True).requires_grad
    assert torch.rand(2, dtype=torch.complex64, requires_grad=True).is_leaf
    for z in (torch.rand(8, dtype=torch.complex32), torch.randn(8, dtype=torch.complex32),
              torch.zeros(8, dtype=torch.complex32).normal_()):
        assert z.dtype is torch.complex32
        assert np.isfinite(parts(z.to(torch.complex64))[0]).all()


@pytest.mark.parametrize("call, error, message", [
    (lambda z: z.random_(2, 5), RuntimeError, "check_random_bounds handles only integral, floating-point and "
                                              "boolean types"),
    (lambda z: z.random_(), NotImplementedError, "\"random_kernel_cpu\" not implemented for 'ComplexFloat'"),
    (lambda z: z.bernoulli_(0.5), NotImplementedError, "\"bernoulli_scalar_cpu_\" not implemented for 'ComplexFloat'"),
    (lambda z: z.bernoulli_(torch.full((3,), 0.5)), NotImplementedError,
     "\"bernoulli_tensor_cpu_self_\" not implemented for 'ComplexFloat'"),
    (lambda z: torch.bernoulli(z), NotImplementedError,
     "\"bernoulli_tensor_cpu_self_\" not implemented for 'ComplexFloat'"),
    (lambda z: torch.bernoulli(z, 0.5), NotImplementedError,
     "\"bernoulli_scalar_cpu_\" not implemented for 'ComplexFloat'"),
    (lambda z: z.geometric_(0.5), NotImplementedError, "\"geometric_cpu\" not implemented for 'ComplexFloat'"),
    (lambda z: torch.randint_like(z, 0, 5), RuntimeError,
     "check_random_bounds handles only integral, floating-point and boolean types"),
    (lambda z: torch.randperm(3, dtype=torch.complex64), NotImplementedError,
     "\"randperm\" not implemented for 'ComplexFloat'"),
    (lambda z: torch.normal(0., z), RuntimeError, "normal expects standard deviation to be non-complex"),
    (lambda z: z.cauchy_(), RuntimeError, "Cauchy distribution is a continuous probability distribution. dtype "
                                          "must be a floating point but you specified c10::complex<float>"),
    (lambda z: z.exponential_(), RuntimeError, "Exponential distribution is a continuous probability "
                                               "distribution. dtype must be a floating point but you specified "
                                               "ComplexFloat"),
    (lambda z: z.log_normal_(), NotImplementedError, "\"log_normal_cpu\" not implemented for 'ComplexFloat'"),
    (lambda z: z.uniform_(3., 1.), RuntimeError, "uniform_ expects to return a [from, to) range, but found "
                                                 "from=3 > to=1"),
])
def test_real_only_samplers_refuse_complex_with_pytorchs_errors(call, error, message):
    with pytest.raises(error) as raised:
        call(torch.zeros(3, dtype=torch.complex64))
    assert str(raised.value) == message
