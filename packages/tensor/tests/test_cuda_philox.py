"""Random numbers made on the GPU: Philox kernels, CUDA generators, seeding and state.

Runs on Numba's CUDA simulator (conftest.py): sample sizes stay near 4k. CUDA numbers are
not the CPU's for a seed (another engine, as in PyTorch), so the tests check what users
rely on: reproducible for a seed, a new stream for every call, the distributions'
moments and bounds, the CPU's errors, and that sampling never moves values between the
host and the device (`device_only` plus a guard on uploads).
"""
import contextlib
import math
import pickle

import numpy as np
import pytest

import ember_tensor as et

pytestmark = pytest.mark.skipif(not et.cuda.is_available(), reason="no CUDA and no simulator")

from cuda_guard import as_on_cuda, device_only, run_on_simulated_devices  # noqa: E402 - imports the CUDA backend

N = 4096
FLOATS = [et.float32, et.float64, et.float16, et.bfloat16]
INTS = [et.int8, et.int16, et.int32, et.int64, et.uint8]


@contextlib.contextmanager
def on_device_only(allow_scalar_reads=False):
    """No device-to-host copy (but of one flag, if allowed) and no upload of host values inside
    the block."""
    from ember_tensor._backends.cuda import storage
    original = storage.from_numpy

    def refuse(arr, *args, **kwargs):
        raise AssertionError(f"host-to-device upload of a {np.shape(arr)} array: sampled on the host")

    storage.from_numpy = refuse
    try:
        with device_only(allow_scalar_reads):
            yield
    finally:
        storage.from_numpy = original


def host(t):
    return (t.float() if t.dtype in (et.float16, et.bfloat16) else t).cpu().numpy()


# Every sampler of a CUDA tensor: name -> fn(dtype, n) making a fresh sample of n values.
SAMPLERS = {
    "rand": lambda dt, n: et.rand(n, device="cuda", dtype=dt),
    "randn": lambda dt, n: et.randn(n, device="cuda", dtype=dt),
    "rand_like": lambda dt, n: et.rand_like(et.empty(n, device="cuda", dtype=dt)),
    "randn_like": lambda dt, n: et.randn_like(et.empty(n, device="cuda", dtype=dt)),
    "normal(float, float, size)": lambda dt, n: et.normal(2.0, 3.0, (n,), device="cuda", dtype=dt),
    "normal(tensor, tensor)": lambda dt, n: et.normal(et.full((n,), 2.0, device="cuda", dtype=dt),
                                                   et.full((1,), 3.0, device="cuda", dtype=dt)),
    "normal(tensor, float)": lambda dt, n: et.normal(et.full((n,), 2.0, device="cuda", dtype=dt), 3.0),
    "normal(float, tensor)": lambda dt, n: et.normal(2.0, et.full((n,), 3.0, device="cuda", dtype=dt)),
    "uniform_": lambda dt, n: et.empty(n, device="cuda", dtype=dt).uniform_(-2, 6),
    "normal_": lambda dt, n: et.empty(n, device="cuda", dtype=dt).normal_(2.0, 3.0),
    "exponential_": lambda dt, n: et.empty(n, device="cuda", dtype=dt).exponential_(2.0),
    "log_normal_": lambda dt, n: et.empty(n, device="cuda", dtype=dt).log_normal_(0.0, 0.5),
    "cauchy_": lambda dt, n: et.empty(n, device="cuda", dtype=dt).cauchy_(1.0, 2.0),
    "geometric_": lambda dt, n: et.empty(n, device="cuda", dtype=dt).geometric_(0.25),
    "bernoulli_(float)": lambda dt, n: et.empty(n, device="cuda", dtype=dt).bernoulli_(0.3),
    "bernoulli_(tensor)": lambda dt, n: et.empty(n, device="cuda", dtype=dt).bernoulli_(
        et.full((1,), 0.3, device="cuda")),
    "bernoulli(tensor)": lambda dt, n: et.bernoulli(et.full((n,), 0.3, device="cuda", dtype=dt)),
    "bernoulli(tensor, p)": lambda dt, n: et.bernoulli(et.empty(n, device="cuda", dtype=dt), 0.3),
    "randint": lambda dt, n: et.randint(-3, 9, (n,), device="cuda", dtype=dt),
    "randint_like": lambda dt, n: et.randint_like(et.empty(n, device="cuda", dtype=dt), 3, 9),
    "random_(from, to)": lambda dt, n: et.empty(n, device="cuda", dtype=dt).random_(1, 7),
}
# Samplers that check a tensor of parameters on the device and read back the one flag.
READS_A_FLAG = {"normal(tensor, tensor)", "normal(float, tensor)", "bernoulli_(tensor)", "bernoulli(tensor)"}
FLOAT_ONLY = {"rand", "randn", "rand_like", "randn_like", "uniform_", "normal_", "exponential_", "log_normal_",
              "cauchy_", "bernoulli(tensor)"} | {k for k in SAMPLERS if k.startswith("normal(")}

# name -> (mean, standard deviation) of the distribution (None: not checked that way)
MOMENTS = {
    "rand": (0.5, math.sqrt(1 / 12)), "rand_like": (0.5, math.sqrt(1 / 12)),
    "randn": (0.0, 1.0), "randn_like": (0.0, 1.0),
    "normal(float, float, size)": (2.0, 3.0), "normal(tensor, tensor)": (2.0, 3.0),
    "normal(tensor, float)": (2.0, 3.0), "normal(float, tensor)": (2.0, 3.0), "normal_": (2.0, 3.0),
    "uniform_": (2.0, 8 / math.sqrt(12)), "exponential_": (0.5, 0.5),
    "geometric_": (4.0, math.sqrt(0.75) / 0.25),
    "bernoulli_(float)": (0.3, math.sqrt(0.21)), "bernoulli_(tensor)": (0.3, math.sqrt(0.21)),
    "bernoulli(tensor)": (0.3, math.sqrt(0.21)), "bernoulli(tensor, p)": (0.3, math.sqrt(0.21)),
    "randint": (2.5, math.sqrt((12 ** 2 - 1) / 12)), "randint_like": (5.5, math.sqrt((6 ** 2 - 1) / 12)),
    "random_(from, to)": (3.5, math.sqrt((6 ** 2 - 1) / 12)),
}


def _cases(names, dtypes):
    """(name, dtype) for every sampler in `names` that takes the dtype."""
    for name in names:
        for dt in dtypes:
            if dt.is_floating_point or name not in FLOAT_ONLY and not (name == "randint" and dt is et.uint8):
                yield pytest.param(name, dt, id=f"{name}-{dt}")


@pytest.mark.parametrize("name, dtype", list(_cases(SAMPLERS, FLOATS + INTS)))
def test_sampler_runs_on_the_device_and_is_reproducible_for_a_seed(name, dtype):
    et.manual_seed(11)
    with on_device_only(allow_scalar_reads=name in READS_A_FLAG):
        first = SAMPLERS[name](dtype, 64)
        second = SAMPLERS[name](dtype, 64)
    et.manual_seed(11)
    again = SAMPLERS[name](dtype, 64)
    assert first.device == et.device("cuda", 0) and first.dtype == dtype and first.shape == (64,)
    np.testing.assert_array_equal(host(again), host(first))
    # the generator's offset moved on: the second call drew other numbers
    assert not np.array_equal(host(first), host(second))


@pytest.mark.parametrize("name, dtype", list(_cases(sorted(MOMENTS), [et.float32, et.float64, et.int32])))
def test_moments(name, dtype):
    mean, std = MOMENTS[name]
    et.manual_seed(5)
    x = host(SAMPLERS[name](dtype, N)).astype(np.float64)
    # five standard errors for the mean; the sample std of 4k draws is within a few percent
    assert abs(x.mean() - mean) < 5 * std / math.sqrt(N), x.mean()
    assert abs(x.std() - std) < 0.1 * std, x.std()


@pytest.mark.parametrize("dtype", [et.float32, et.float64, et.bfloat16])
def test_other_distributions_by_their_quantiles(dtype):
    et.manual_seed(3)
    lognormal = host(et.empty(N, device="cuda", dtype=dtype).log_normal_(0.0, 0.5)).astype(np.float64)
    assert lognormal.min() > 0
    assert abs(np.log(lognormal).mean()) < 0.03 and abs(np.log(lognormal).std() - 0.5) < 0.05
    cauchy = host(et.empty(N, device="cuda", dtype=dtype).cauchy_(1.0, 2.0)).astype(np.float64)
    # median 1, quartiles at median -/+ sigma
    q1, q2, q3 = np.quantile(cauchy, [0.25, 0.5, 0.75])
    assert abs(q2 - 1.0) < 0.15 and abs(q1 + 1.0) < 0.25 and abs(q3 - 3.0) < 0.25
    exponential = host(et.empty(N, device="cuda", dtype=dtype).exponential_(2.0))
    assert exponential.min() >= 0


@pytest.mark.parametrize("dtype", FLOATS)
def test_rand_stays_in_the_unit_interval_in_every_float_type(dtype):
    et.manual_seed(0)
    x = host(et.rand(N, device="cuda", dtype=dtype))
    assert x.min() >= 0 and x.max() < 1
    u = host(et.empty(N, device="cuda", dtype=dtype).uniform_(-3, -1))
    assert u.min() >= -3 and u.max() <= -1


@pytest.mark.parametrize("dtype", INTS + [et.float32, et.float16, et.bfloat16, et.float64, et.bool])
def test_integer_ranges(dtype):
    et.manual_seed(1)
    low = 0 if dtype in (et.uint8, et.bool) else -3
    high = 2 if dtype is et.bool else 9
    x = host(et.randint(low, high, (N,), device="cuda", dtype=dtype)).astype(np.int64)
    assert x.min() == low and x.max() == high - 1  # every value is hit with 4k draws
    full = host(et.empty(N, device="cuda", dtype=dtype).random_()).astype(np.float64)
    # random_() spans [0, 2**mantissa digits] for floats and [0, max] for integers
    top = {et.float32: 2 ** 24, et.float64: 2 ** 53, et.float16: 2 ** 11, et.bfloat16: 2 ** 8,
           et.bool: 1}.get(dtype) or np.iinfo(dtype.np).max
    assert full.min() >= 0 and full.max() <= top and full.max() > top / 2


def test_wide_integer_ranges_use_64_bits():
    et.manual_seed(2)
    x = host(et.randint(-2 ** 62, 2 ** 62, (N,), device="cuda"))
    assert x.min() < -2 ** 61 and x.max() > 2 ** 61 and abs(x.mean()) < 2 ** 62 * 0.1
    full = host(et.empty(N, device="cuda", dtype=et.int64).random_(-2 ** 63, None))
    assert full.min() < -2 ** 62 and full.max() > 2 ** 62


def test_bernoulli_probabilities_zero_and_one_are_exact():
    et.manual_seed(4)
    p = et.tensor([0.0, 1.0, 0.5], device="cuda").expand(1000, 3)  # a broadcast (stride 0) input
    with on_device_only(allow_scalar_reads=True):
        draws = et.bernoulli(p)
    x = host(draws)
    assert (x[:, 0] == 0).all() and (x[:, 1] == 1).all() and 0.4 < x[:, 2].mean() < 0.6
    assert host(et.ones(50, device="cuda").bernoulli_(0.0)).max() == 0
    assert host(et.zeros(50, device="cuda").bernoulli_(1.0)).min() == 1


# --- layouts: non-contiguous, 0-d and empty tensors ------------------------------------------------

LAYOUT_OPS = {
    "uniform_": lambda t: t.uniform_(), "normal_": lambda t: t.normal_(), "random_": lambda t: t.random_(0, 5),
    "bernoulli_": lambda t: t.bernoulli_(0.5), "exponential_": lambda t: t.exponential_(),
    "log_normal_": lambda t: t.log_normal_(), "cauchy_": lambda t: t.cauchy_(),
    "geometric_": lambda t: t.geometric_(0.5),
    "bernoulli_(tensor)": lambda t: t.bernoulli_(et.full((1,) * t.dim(), 0.5, device="cuda")),
}


@pytest.mark.parametrize("name", sorted(LAYOUT_OPS))
@pytest.mark.parametrize("dtype", [et.float32, et.float16, et.float64])
def test_non_contiguous_targets_get_the_values_a_contiguous_one_gets(name, dtype):
    fill = LAYOUT_OPS[name]
    et.manual_seed(9)
    contiguous = fill(et.zeros(6, 4, device="cuda", dtype=dtype))
    et.manual_seed(9)
    base = et.zeros(4, 6, device="cuda", dtype=dtype)
    reads_a_flag = name == "bernoulli_(tensor)"
    with on_device_only(allow_scalar_reads=reads_a_flag):
        view = fill(base.t())
    assert not view.is_contiguous() and view._version == base._version > 0
    np.testing.assert_array_equal(host(view), host(contiguous))
    strided = et.full((6, 8), -7.0, device="cuda", dtype=dtype)
    with on_device_only(allow_scalar_reads=reads_a_flag):
        fill(strided[:, ::2])
    assert (host(strided)[:, 1::2] == -7).all()  # the elements between stay untouched


@pytest.mark.parametrize("name", sorted(LAYOUT_OPS))
def test_zero_dim_and_empty_targets(name):
    fill = LAYOUT_OPS[name]
    with on_device_only(allow_scalar_reads=name == "bernoulli_(tensor)"):
        scalar = fill(et.zeros((), device="cuda"))
        empty = fill(et.zeros(0, 3, device="cuda"))
    assert scalar.shape == () and empty.shape == (0, 3)
    assert np.isfinite(host(scalar))
    assert et.rand((), device="cuda").shape == () and et.randn(0, device="cuda").shape == (0,)


def test_out_is_resized_and_filled_on_the_device():
    out = et.empty(2, device="cuda")
    with on_device_only():
        result = et.rand(3, 4, out=out)
        et.normal(et.zeros(5, device="cuda"), 1.0, out=out)
    assert result is out and out.shape == (5,)


def test_launch_configuration_does_not_change_the_numbers():
    from ember_tensor._backends.cuda import storage
    from ember_tensor._backends.cuda.kernels import random as K
    results = []
    for grid, block in ((1, 1), (2, 3), (3, 4)):
        out = storage.empty((37,), np.float32)
        K.uniform32[grid, block](out, np.uint64(5), np.uint64(2), np.uint64(8), np.float32(2 ** -24),
                                 np.float32(0), np.float32(1))
        results.append(storage.to_numpy(out))
    np.testing.assert_array_equal(results[0], results[1])
    np.testing.assert_array_equal(results[0], results[2])


# --- Philox itself --------------------------------------------------------------------------------

# Known-answer vectors of Random123's philox4x32-10: (counter words, key words) -> output words
PHILOX_KAT = [
    ((0, 0, 0, 0), (0, 0), (0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8)),
    ((0xffffffff,) * 4, (0xffffffff,) * 2, (0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd)),
    ((0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344), (0xa4093822, 0x299f31d0),
     (0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1)),
]


@pytest.mark.parametrize("counter, key, expected", PHILOX_KAT)
def test_philox_matches_the_reference_known_answers(counter, key, expected):
    from ember_tensor._backends.cuda.kernels.random import philox4x32
    words = philox4x32(np.uint64(key[0] | key[1] << 32), np.uint64(counter[0] | counter[1] << 32),
                       np.uint64(counter[2] | counter[3] << 32))
    assert tuple(int(w) for w in words) == expected


# --- generators, seeding and state ----------------------------------------------------------------


def test_each_gpu_has_its_own_generator_seeded_by_manual_seed():
    et.manual_seed(21)
    assert et.cuda.initial_seed() == 21
    a = et.rand(8, device="cuda")
    et.cuda.manual_seed(21)  # only the current GPU's generator
    np.testing.assert_array_equal(host(et.rand(8, device="cuda")), host(a))
    et.cuda.manual_seed_all(21)
    np.testing.assert_array_equal(host(et.rand(8, device="cuda")), host(a))
    # the CPU draws from its own engine: seeding CUDA alone leaves it alone, and back
    et.manual_seed(21)
    cpu = et.rand(8).numpy()
    et.cuda.manual_seed(99)
    et.manual_seed(21)
    np.testing.assert_array_equal(et.rand(8).numpy(), cpu)
    et.cuda.seed()
    assert et.cuda.initial_seed() != 21
    et.cuda.seed_all()
    assert 0 <= et.cuda.initial_seed() < 2 ** 64


def test_explicit_cuda_generators():
    g = et.Generator("cuda")
    assert g.device == et.device("cuda", 0) and g.initial_seed() == 67280421310721
    a = et.rand(6, device="cuda", generator=g.manual_seed(3))
    b = et.rand(6, device="cuda", generator=et.Generator("cuda").manual_seed(3))
    np.testing.assert_array_equal(host(a), host(b))
    c = et.randn(6, device="cuda", generator=g)
    with on_device_only():
        et.empty(4, device="cuda").normal_(generator=g)
    assert not np.array_equal(host(a), host(c))
    with pytest.raises(RuntimeError, match="Expected a 'cuda' device type for generator but found 'cpu'"):
        et.rand(3, device="cuda", generator=et.Generator())
    with pytest.raises(RuntimeError, match="Expected a 'cuda' device type for generator but found 'cpu'"):
        et.rand(3, device="cuda", generator=et.default_generator)
    with pytest.raises(RuntimeError, match="Expected a 'cpu' device type for generator but found 'cuda'"):
        et.rand(3, generator=g)


def test_rng_state_is_seed_and_offset_and_round_trips():
    et.cuda.manual_seed(5)
    state = et.cuda.get_rng_state()
    assert state.dtype == et.uint8 and state.device == et.device("cpu") and state.shape == (16,)
    assert int.from_bytes(bytes(state.tolist()[:8]), "little") == 5
    assert int.from_bytes(bytes(state.tolist()[8:]), "little") == 0
    a = et.rand(5, device="cuda")
    et.randn(3, device="cuda", dtype=et.float64)  # two counter blocks: offset + 8
    assert int.from_bytes(bytes(et.cuda.get_rng_state().tolist()[8:]), "little") == 12
    et.cuda.set_rng_state(state)
    np.testing.assert_array_equal(host(et.rand(5, device="cuda")), host(a))
    states = et.cuda.get_rng_state_all()
    assert len(states) == et.cuda.device_count()
    et.cuda.set_rng_state_all(states)
    g = et.Generator("cuda").manual_seed(8)
    et.rand(3, device="cuda", generator=g)
    clone = pickle.loads(pickle.dumps(g))
    np.testing.assert_array_equal(host(et.rand(4, device="cuda", generator=clone)),
                                  host(et.rand(4, device="cuda", generator=g)))
    with pytest.raises(RuntimeError, match="RNG state is wrong size"):
        et.cuda.set_rng_state(et.zeros(15, dtype=et.uint8))
    with pytest.raises(TypeError, match="RNG state must be a torch.ByteTensor"):
        et.cuda.set_rng_state(et.zeros(16))


@pytest.mark.parametrize("dtype", [et.int64, et.int32, et.float32, et.float16])
def test_randperm_sorts_random_keys_on_the_device(dtype):
    et.manual_seed(6)
    with on_device_only():
        perm = et.randperm(40, device="cuda", dtype=dtype)
        other = et.randperm(40, device="cuda", dtype=dtype)
        out = et.empty(3, device="cuda", dtype=dtype)
        et.randperm(5, out=out)
    et.manual_seed(6)
    np.testing.assert_array_equal(host(et.randperm(40, device="cuda", dtype=dtype)), host(perm))
    assert perm.dtype == dtype and perm.device.type == "cuda"
    assert sorted(host(perm).tolist()) == list(range(40)) and sorted(host(out).tolist()) == list(range(5))
    assert host(perm).tolist() != host(other).tolist()
    assert et.randperm(0, device="cuda").shape == (0,) and host(et.randperm(1, device="cuda")).tolist() == [0]


def test_multinomial_on_the_device():
    weights = et.tensor([[0.0, 5.0, 0.0, 1.0, 2.0], [1.0, 1.0, 1.0, 1.0, 0.0]], device="cuda")
    et.manual_seed(6)
    with on_device_only(allow_scalar_reads=True):  # the weight checks read back flags
        without = et.multinomial(weights, 3)
        everything = et.multinomial(weights[1], 5)
        with_replacement = et.multinomial(weights, 2000, replacement=True)
        out = et.empty(1, device="cuda", dtype=et.int64)
        et.multinomial(weights, 2, out=out)
    assert without.shape == (2, 3) and everything.shape == (5,) and out.shape == (2, 2)
    rows = host(without).tolist()
    assert sorted(rows[0]) == [1, 3, 4] and len(set(rows[1])) == 3 and 4 not in rows[1]
    assert sorted(host(everything).tolist()) == [0, 1, 2, 3, 4] and host(everything)[-1] == 4  # weight 0 last
    counts = [np.bincount(row, minlength=5) / 2000 for row in host(with_replacement)]
    np.testing.assert_allclose(counts[0], [0, 5 / 8, 0, 1 / 8, 2 / 8], atol=0.04)
    np.testing.assert_allclose(counts[1], [0.25, 0.25, 0.25, 0.25, 0], atol=0.04)
    et.manual_seed(6)
    np.testing.assert_array_equal(host(et.multinomial(weights, 3)), host(without))


@pytest.mark.parametrize("rate", [0.5, 4.0, 30.0, 1000.0])  # Knuth below 10, PTRS above
def test_poisson_on_the_device(rate):
    et.manual_seed(6)
    rates = et.full((2000,), rate, device="cuda")
    with on_device_only(allow_scalar_reads=True):  # the rate check reads back one flag
        counts = et.poisson(rates)
    values = host(counts).astype(np.float64)
    assert counts.dtype == et.float32 and (values == np.round(values)).all() and values.min() >= 0
    # mean and variance both equal the rate
    assert abs(values.mean() - rate) < 5 * math.sqrt(rate / 2000)
    assert abs(values.var() / rate - 1) < 0.15
    et.manual_seed(6)
    np.testing.assert_array_equal(host(et.poisson(rates)), host(counts))
    assert host(et.poisson(et.zeros(3, device="cuda", dtype=et.float64))).tolist() == [0.0] * 3
    assert host(et.poisson(et.full((), 1e19, device="cuda", dtype=et.float64))).item() == 1e19


# --- errors: the CPU's ------------------------------------------------------------------------------

ERRORS = [
    ("t.empty(3, device='cuda').bernoulli_(t.tensor([0.5, 1.5, 0.2], device='cuda'))", RuntimeError,
     "Expected p_in >= 0 && p_in <= 1 to be true"),
    ("t.bernoulli(t.tensor([0.5, float('nan')], device='cuda'))", RuntimeError,
     "Expected p_in >= 0 && p_in <= 1 to be true"),
    ("t.normal(t.zeros(2, device='cuda'), t.tensor([1.0, -1.0], device='cuda'))", RuntimeError,
     "normal expects all elements of std >= 0.0"),
    ("t.empty(3, device='cuda').bernoulli_(1.5)", RuntimeError, "bernoulli_ expects p to be in [0, 1], but got p=1.5"),
    ("t.empty(3, device='cuda').uniform_(2, 1)", RuntimeError,
     "uniform_ expects to return a [from, to) range, but found from=2 > to=1"),
    ("t.randint(5, 5, (3,), device='cuda')", RuntimeError,
     "random_ expects 'from' to be less than 'to', but got from=5 >= to=5"),
    ("t.rand(2, device='cuda', dtype=t.int64)", NotImplementedError,
     "\"check_uniform_bounds\" not implemented for 'Long'"),
    ("t.empty(2, device='cuda', dtype=t.int32).exponential_()", RuntimeError,
     "Exponential distribution is a continuous probability distribution"),
    ("t.empty(2, device='cuda').geometric_(1.0)", RuntimeError, "geometric_ expects p to be in (0, 1), but got p=1"),
    ("t.empty(2, 3, device='cuda').bernoulli_(t.rand(4, device='cuda'))", RuntimeError,
     "The expanded size of the tensor"),
    ("t.multinomial(t.tensor([0.5, -1.0], device='cuda'), 1)", RuntimeError,
     "probability tensor contains either `inf`, `nan` or element < 0"),
    ("t.multinomial(t.tensor([0.5, float('nan')], device='cuda'), 2, True)", RuntimeError,
     "invalid multinomial distribution (encountering probability entry < 0)"),
    ("t.multinomial(t.tensor([[1.0, float('inf')]], device='cuda'), 2, True)", RuntimeError,
     "invalid multinomial distribution (encountering probability entry = infinity or NaN)"),
    ("t.multinomial(t.tensor([[1.0, 1.0], [0.0, 0.0]], device='cuda'), 1)", RuntimeError,
     "invalid multinomial distribution (sum of probabilities <= 0)"),
    ("t.multinomial(t.tensor([0.0, 0.0], device='cuda'), 3, True)", RuntimeError,
     "invalid multinomial distribution (sum of probabilities <= 0)"),
    ("t.poisson(t.tensor([1.0, float('nan')], device='cuda'))", RuntimeError,
     "invalid Poisson rate, expected rate to be non-negative"),
    ("t.poisson(t.tensor([1, 2], device='cuda'))", NotImplementedError, "\"poisson_cuda\" not implemented for 'Long'"),
]


@pytest.mark.parametrize("code, error, message", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_are_the_cpus(code, error, message):
    with pytest.raises(error) as cuda_error:
        eval(code, {"t": et})
    assert message in str(cuda_error.value)
    with pytest.raises(error) as cpu_error:
        eval(code.replace(", device='cuda'", "").replace("device='cuda'", ""), {"t": et})
    assert as_on_cuda(str(cpu_error.value)) == str(cuda_error.value)


def test_a_failed_check_leaves_the_target_unchanged():
    target = et.full((3,), 7.0, device="cuda")
    with pytest.raises(RuntimeError):
        target.bernoulli_(et.tensor([0.5, 2.0, 0.5], device="cuda"))
    assert host(target).tolist() == [7.0, 7.0, 7.0]
    with device_only(allow_scalar_reads=True):  # the check reads back one flag
        target.bernoulli_(et.tensor([0.5, 1.0, 0.5], device="cuda"))


def test_dropout_masks_are_made_on_the_device():
    # what ember_nn's dropout does: empty(...).bernoulli_(1 - p)
    x = et.ones(8, 16, device="cuda")
    with on_device_only():
        mask = et.empty(x.shape, dtype=x.dtype, device=x.device).bernoulli_(0.75)
        y = x * mask * (1 / 0.75)
    values = host(y)
    assert set(np.unique(values).tolist()) <= {0.0, float(np.float32(1 / 0.75))}
    assert 0.5 < (values > 0).mean() < 0.95


def test_random_ops_backward_on_cuda_matches_the_cpu():
    pytest.importorskip("ember_autograd")
    for device in ("cpu", "cuda"):
        mean = et.zeros(4, device=device, requires_grad=True)
        et.normal(mean, 1.0).sum().backward()
        assert mean.grad.device.type == device and host(mean.grad).tolist() == [0.0] * 4
        w = et.ones(3, device=device, requires_grad=True)
        (w * 1.0).uniform_().sum().backward()
        assert host(w.grad).tolist() == [0.0] * 3


# --- several GPUs (simulated) ---------------------------------------------------------------------

MULTI_DEVICE_SCRIPT = """
import numpy as np
import ember_tensor as torch

assert torch.cuda.device_count() == 2
torch.manual_seed(3)                        # every GPU's generator
a0 = torch.rand(6, device='cuda:0')
a1 = torch.rand(6, device='cuda:1')
assert a1.device == torch.device('cuda:1')
assert a0.tolist() == a1.tolist()           # same seed, same offset: the same stream
state0 = torch.cuda.get_rng_state(0)
with torch.cuda.device(1):
    torch.cuda.manual_seed(9)               # the current GPU's only
    assert torch.cuda.initial_seed() == 9
    before = torch.cuda.memory_allocated(1)
    b = torch.empty(5, device='cuda').normal_()
    p = torch.bernoulli(torch.full((5,), 0.5, device='cuda'))
    assert b.device == p.device == torch.device('cuda:1')
assert torch.cuda.initial_seed() == 3
assert torch.cuda.get_rng_state(0).tolist() == state0.tolist()   # GPU 0 drew nothing
assert torch.cuda.get_rng_state(1).tolist()[8] == 8               # GPU 1: two draws
assert len(torch.cuda.get_rng_state_all()) == 2
print("ok")
"""


def test_each_of_several_gpus_has_its_own_generator():
    if "simulator" not in et.cuda.get_device_name().lower():
        pytest.skip("simulates two devices on Numba's CUDA simulator")
    run_on_simulated_devices(MULTI_DEVICE_SCRIPT, devices=2)


# --- real GPU only: what the simulator cannot show ------------------------------------------------


@pytest.mark.gpu
def test_large_launches_on_a_gpu_match_one_block_and_have_the_right_moments():
    # Many blocks and threads (the real launch) against one thread (no grid-stride
    # interleaving): the numbers must not depend on the configuration.
    from ember_tensor._backends.cuda import launch, storage
    from ember_tensor._backends.cuda.kernels import random as K
    n = 1 << 20
    one, many = storage.empty((n,), np.float32), storage.empty((n,), np.float32)
    args = (np.uint64(123), np.uint64(7), np.float32(0.0), np.float32(1.0))
    K.normal32[1, 1](one, *args)
    launch.grid_stride(K.normal32, (n + 3) // 4, many, *args)
    np.testing.assert_array_equal(storage.to_numpy(one), storage.to_numpy(many))
    et.manual_seed(0)
    for name, mean, std in (("rand", 0.5, math.sqrt(1 / 12)), ("randn", 0.0, 1.0),
                            ("bernoulli_(float)", 0.3, math.sqrt(0.21)), ("exponential_", 0.5, 0.5)):
        for dtype in (et.float32, et.float64, et.float16):
            x = host(SAMPLERS[name](dtype, 1 << 22)).astype(np.float64)
            assert abs(x.mean() - mean) < 5 * std / 2 ** 11 + (2e-3 if dtype is et.float16 else 0), (name, dtype)
            assert abs(x.std() - std) < 0.01 * std, (name, dtype)
