"""What random numbers satisfy on every device (the `device` parameter): the distributions'
moments, quantiles and bounds in every dtype, integer ranges up to 64 bits, exact
Bernoulli probabilities 0 and 1, 0-d and empty targets, out=, PyTorch's errors (on CUDA
the CPU's, word for word) with the target left as it was, dropout masks, and zero
gradients through samplers.

Draws are near 4k values (Numba's CUDA simulator is slow) and seeded, with bounds of about
five standard errors. On CUDA each draw runs inside `on_device_only`: sampled on the
device, never on the host. CUDA's own engine (Philox) is test_cuda_philox.py's.
"""
import math

import numpy as np
import pytest

import ember_tensor as et
from cuda_guard import DEVICES, as_on_cuda
from device_random_cases import FLOATS, IN_PLACE_FILLS, INTS, MOMENTS, N, READS_A_FLAG, SAMPLERS, cases, host, \
    on_device_only


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name, dtype", list(cases(sorted(MOMENTS), [et.float32, et.float64, et.int32])))
def test_moments(name, dtype, device):
    """Each sampler's mean and standard deviation are its distribution's."""
    mean, std = MOMENTS[name]
    et.manual_seed(5)
    with on_device_only(device, allow_scalar_reads=name in READS_A_FLAG):
        draw = SAMPLERS[name](dtype, N, device)
    x = host(draw).astype(np.float64)
    # five standard errors for the mean; the sample std of 4k draws is within a few percent
    assert abs(x.mean() - mean) < 5 * std / math.sqrt(N), x.mean()
    assert abs(x.std() - std) < 0.1 * std, x.std()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [et.float32, et.float64, et.bfloat16])
def test_other_distributions_by_their_quantiles(dtype, device):
    """log-normal, Cauchy and exponential draws by their quantiles and bounds."""
    et.manual_seed(3)
    lognormal = host(et.empty(N, device=device, dtype=dtype).log_normal_(0.0, 0.5)).astype(np.float64)
    assert lognormal.min() > 0
    assert abs(np.log(lognormal).mean()) < 0.03 and abs(np.log(lognormal).std() - 0.5) < 0.05
    cauchy = host(et.empty(N, device=device, dtype=dtype).cauchy_(1.0, 2.0)).astype(np.float64)
    # median 1, quartiles at median -/+ sigma
    q1, q2, q3 = np.quantile(cauchy, [0.25, 0.5, 0.75])
    assert abs(q2 - 1.0) < 0.15 and abs(q1 + 1.0) < 0.25 and abs(q3 - 3.0) < 0.25
    exponential = host(et.empty(N, device=device, dtype=dtype).exponential_(2.0))
    assert exponential.min() >= 0


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_rand_stays_in_the_unit_interval_in_every_float_type(dtype, device):
    """rand lies in [0, 1) and uniform_(-3, -1) in its bounds, rounding included."""
    et.manual_seed(0)
    x = host(et.rand(N, device=device, dtype=dtype))
    assert x.min() >= 0 and x.max() < 1
    u = host(et.empty(N, device=device, dtype=dtype).uniform_(-3, -1))
    assert u.min() >= -3 and u.max() <= -1


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", INTS + [et.float32, et.float16, et.bfloat16, et.float64, et.bool])
def test_integer_ranges(dtype, device):
    """randint hits every value of [low, high) and no other; random_() spans the dtype."""
    et.manual_seed(1)
    low = 0 if dtype in (et.uint8, et.bool) else -3
    high = 2 if dtype is et.bool else 9
    x = host(et.randint(low, high, (N,), device=device, dtype=dtype)).astype(np.int64)
    assert x.min() == low and x.max() == high - 1  # every value is hit with 4k draws
    full = host(et.empty(N, device=device, dtype=dtype).random_()).astype(np.float64)
    # random_() spans [0, 2**mantissa digits] for floats and [0, max] for integers
    top = {et.float32: 2 ** 24, et.float64: 2 ** 53, et.float16: 2 ** 11, et.bfloat16: 2 ** 8,
           et.bool: 1}.get(dtype) or np.iinfo(dtype.np).max
    assert full.min() >= 0 and full.max() <= top and full.max() > top / 2


@pytest.mark.parametrize("device", DEVICES)
def test_wide_integer_ranges_use_64_bits(device):
    """Ranges wider than 2**32 draw from all 64 bits."""
    et.manual_seed(2)
    x = host(et.randint(-2 ** 62, 2 ** 62, (N,), device=device))
    assert x.min() < -2 ** 61 and x.max() > 2 ** 61 and abs(x.mean()) < 2 ** 62 * 0.1
    full = host(et.empty(N, device=device, dtype=et.int64).random_(-2 ** 63, None))
    assert full.min() < -2 ** 62 and full.max() > 2 ** 62


@pytest.mark.parametrize("device", DEVICES)
def test_bernoulli_probabilities_zero_and_one_are_exact(device):
    """p = 0 never draws 1 and p = 1 always does, from a broadcast (stride 0) input too."""
    et.manual_seed(4)
    p = et.tensor([0.0, 1.0, 0.5], device=device).expand(1000, 3)
    with on_device_only(device, allow_scalar_reads=True):
        draws = et.bernoulli(p)
    x = host(draws)
    assert (x[:, 0] == 0).all() and (x[:, 1] == 1).all() and 0.4 < x[:, 2].mean() < 0.6
    assert host(et.ones(50, device=device).bernoulli_(0.0)).max() == 0
    assert host(et.zeros(50, device=device).bernoulli_(1.0)).min() == 1


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(IN_PLACE_FILLS))
def test_zero_dim_and_empty_targets(name, device):
    """A 0-d target gets one finite number, an empty one keeps its shape."""
    fill = IN_PLACE_FILLS[name]
    with on_device_only(device, allow_scalar_reads=name == "bernoulli_(tensor)"):
        scalar = fill(et.zeros((), device=device))
        empty = fill(et.zeros(0, 3, device=device))
    assert scalar.shape == () and empty.shape == (0, 3)
    assert np.isfinite(host(scalar))
    assert et.rand((), device=device).shape == () and et.randn(0, device=device).shape == (0,)


@pytest.mark.parametrize("device", DEVICES)
def test_out_is_resized_and_filled(device):
    """rand and normal write into out=, resizing it."""
    out = et.empty(2, device=device)
    with on_device_only(device):
        result = et.rand(3, 4, out=out)
        et.normal(et.zeros(5, device=device), 1.0, out=out)
    assert result is out and out.shape == (5,)


# (code with {dev} for the device, error type, a part of PyTorch's message)
ERRORS = [
    ("t.empty(3, device='{dev}').bernoulli_(t.tensor([0.5, 1.5, 0.2], device='{dev}'))", RuntimeError,
     "Expected p_in >= 0 && p_in <= 1 to be true"),
    ("t.bernoulli(t.tensor([0.5, float('nan')], device='{dev}'))", RuntimeError,
     "Expected p_in >= 0 && p_in <= 1 to be true"),
    ("t.normal(t.zeros(2, device='{dev}'), t.tensor([1.0, -1.0], device='{dev}'))", RuntimeError,
     "normal expects all elements of std >= 0.0"),
    ("t.empty(3, device='{dev}').bernoulli_(1.5)", RuntimeError, "bernoulli_ expects p to be in [0, 1], but got p=1.5"),
    ("t.empty(3, device='{dev}').uniform_(2, 1)", RuntimeError,
     "uniform_ expects to return a [from, to) range, but found from=2 > to=1"),
    ("t.randint(5, 5, (3,), device='{dev}')", RuntimeError,
     "random_ expects 'from' to be less than 'to', but got from=5 >= to=5"),
    ("t.rand(2, device='{dev}', dtype=t.int64)", NotImplementedError,
     "\"check_uniform_bounds\" not implemented for 'Long'"),
    ("t.empty(2, device='{dev}', dtype=t.int32).exponential_()", RuntimeError,
     "Exponential distribution is a continuous probability distribution"),
    ("t.empty(2, device='{dev}').geometric_(1.0)", RuntimeError, "geometric_ expects p to be in (0, 1), but got p=1"),
    ("t.empty(2, 3, device='{dev}').bernoulli_(t.rand(4, device='{dev}'))", RuntimeError,
     "The expanded size of the tensor"),
    ("t.multinomial(t.tensor([0.5, -1.0], device='{dev}'), 1)", RuntimeError,
     "probability tensor contains either `inf`, `nan` or element < 0"),
    ("t.multinomial(t.tensor([0.5, float('nan')], device='{dev}'), 2, True)", RuntimeError,
     "invalid multinomial distribution (encountering probability entry < 0)"),
    ("t.multinomial(t.tensor([[1.0, float('inf')]], device='{dev}'), 2, True)", RuntimeError,
     "invalid multinomial distribution (encountering probability entry = infinity or NaN)"),
    ("t.multinomial(t.tensor([[1.0, 1.0], [0.0, 0.0]], device='{dev}'), 1)", RuntimeError,
     "invalid multinomial distribution (sum of probabilities <= 0)"),
    ("t.multinomial(t.tensor([0.0, 0.0], device='{dev}'), 3, True)", RuntimeError,
     "invalid multinomial distribution (sum of probabilities <= 0)"),
    ("t.poisson(t.tensor([1.0, float('nan')], device='{dev}'))", RuntimeError,
     "invalid Poisson rate, expected rate to be non-negative"),
    ("t.poisson(t.tensor([1, 2], device='{dev}'))", NotImplementedError,
     "\"poisson_{dev}\" not implemented for 'Long'"),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("code, error, message", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_are_pytorchs(code, error, message, device):
    """Bad arguments raise PyTorch's error; on CUDA the CPU's, word for word (a dtype error
    naming the CUDA kernel)."""
    with pytest.raises(error) as raised:
        eval(code.format(dev=device), {"t": et})
    assert message.format(dev=device) in str(raised.value)
    if device != "cpu":
        with pytest.raises(error) as cpu_error:
            eval(code.format(dev="cpu"), {"t": et})
        assert as_on_cuda(str(cpu_error.value)) == str(raised.value)


@pytest.mark.parametrize("device", DEVICES)
def test_a_failed_check_leaves_the_target_unchanged(device):
    """A probability out of range raises before anything is written; a valid one reads back
    only the check's flag."""
    target = et.full((3,), 7.0, device=device)
    with pytest.raises(RuntimeError):
        target.bernoulli_(et.tensor([0.5, 2.0, 0.5], device=device))
    assert host(target).tolist() == [7.0, 7.0, 7.0]
    valid = et.tensor([0.5, 1.0, 0.5], device=device)
    with on_device_only(device, allow_scalar_reads=True):  # the check reads back one flag
        target.bernoulli_(valid)


@pytest.mark.parametrize("device", DEVICES)
def test_dropout_masks(device):
    """What ember_nn's dropout does, empty(...).bernoulli_(1 - p), keeps about 1 - p and
    scales them by 1 / (1 - p)."""
    x = et.ones(8, 16, device=device)
    with on_device_only(device):
        mask = et.empty(x.shape, dtype=x.dtype, device=x.device).bernoulli_(0.75)
        y = x * mask * (1 / 0.75)
    values = host(y)
    assert set(np.unique(values).tolist()) <= {0.0, float(np.float32(1 / 0.75))}
    assert 0.5 < (values > 0).mean() < 0.95


@pytest.mark.parametrize("device", DEVICES)
def test_random_ops_backward_gives_zero_gradients(device):
    """normal(mean, std) and x.uniform_() pass zero gradients back, on the device."""
    pytest.importorskip("ember_autograd")
    mean = et.zeros(4, device=device, requires_grad=True)
    et.normal(mean, 1.0).sum().backward()
    assert mean.grad.device.type == device and host(mean.grad).tolist() == [0.0] * 4
    w = et.ones(3, device=device, requires_grad=True)
    (w * 1.0).uniform_().sum().backward()
    assert host(w.grad).tolist() == [0.0] * 3
