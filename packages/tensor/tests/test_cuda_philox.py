"""What CUDA's random engine, Philox 4x32-10, gives: Random123's known answers; numbers
that do not depend on the launch configuration or the target's layout (each element's
counter is its index); every sampler drawn on the device, reproducible for a seed, the
offset moving on between calls; randperm, multinomial and poisson on the device.

Runs on Numba's CUDA simulator (conftest.py): sample sizes stay near 4k. What holds on
every device (moments, bounds, errors) is test_random_properties.py's; CUDA's generators
and their state are test_cuda_generators.py's.
"""
import math

import numpy as np
import pytest

import ember_tensor as et

pytestmark = pytest.mark.skipif(not et.cuda.is_available(), reason="no CUDA and no simulator")

from device_random_cases import (FLOATS, IN_PLACE_FILLS, INTS, READS_A_FLAG, SAMPLERS, cases, host,  # noqa: E402
                                 on_device_only)


@pytest.mark.parametrize("name, dtype", list(cases(SAMPLERS, FLOATS + INTS)))
def test_sampler_runs_on_the_device_and_is_reproducible_for_a_seed(name, dtype):
    """Every sampler draws on the device, the same numbers again for a seed and new ones on the next call."""
    et.manual_seed(11)
    with on_device_only("cuda", allow_scalar_reads=name in READS_A_FLAG):
        first = SAMPLERS[name](dtype, 64, "cuda")
        second = SAMPLERS[name](dtype, 64, "cuda")
    et.manual_seed(11)
    again = SAMPLERS[name](dtype, 64, "cuda")
    assert first.device == et.device("cuda", 0) and first.dtype == dtype and first.shape == (64,)
    np.testing.assert_array_equal(host(again), host(first))
    # the generator's offset moved on: the second call drew other numbers
    assert not np.array_equal(host(first), host(second))


@pytest.mark.parametrize("name", sorted(IN_PLACE_FILLS))
@pytest.mark.parametrize("dtype", [et.float32, et.float16, et.float64])
def test_non_contiguous_targets_get_the_values_a_contiguous_one_gets(name, dtype):
    """A transposed target gets, element for element, what a contiguous one gets for the seed;
    a stepped one leaves the elements between untouched."""
    fill = IN_PLACE_FILLS[name]
    et.manual_seed(9)
    contiguous = fill(et.zeros(6, 4, device="cuda", dtype=dtype))
    et.manual_seed(9)
    base = et.zeros(4, 6, device="cuda", dtype=dtype)
    reads_a_flag = name == "bernoulli_(tensor)"
    with on_device_only("cuda", allow_scalar_reads=reads_a_flag):
        view = fill(base.t())
    assert not view.is_contiguous() and view._version == base._version > 0
    np.testing.assert_array_equal(host(view), host(contiguous))
    strided = et.full((6, 8), -7.0, device="cuda", dtype=dtype)
    with on_device_only("cuda", allow_scalar_reads=reads_a_flag):
        fill(strided[:, ::2])
    assert (host(strided)[:, 1::2] == -7).all()  # the elements between stay untouched


def test_launch_configuration_does_not_change_the_numbers():
    """The same numbers from one thread and from grids of several blocks (no grid-stride interleaving)."""
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
    """philox4x32-10 gives Random123's known answers."""
    from ember_tensor._backends.cuda.kernels.random import philox4x32
    words = philox4x32(np.uint64(key[0] | key[1] << 32), np.uint64(counter[0] | counter[1] << 32),
                       np.uint64(counter[2] | counter[3] << 32))
    assert tuple(int(w) for w in words) == expected


@pytest.mark.parametrize("dtype", [et.int64, et.int32, et.float32, et.float16])
def test_randperm_sorts_random_keys_on_the_device(dtype):
    """randperm (and its out=) is a permutation made on the device, reproducible for a seed."""
    et.manual_seed(6)
    with on_device_only("cuda"):
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
    """multinomial with and without replacement on the device: zero weights never drawn (last
    when all are), frequencies by weight, reproducible for a seed."""
    weights = et.tensor([[0.0, 5.0, 0.0, 1.0, 2.0], [1.0, 1.0, 1.0, 1.0, 0.0]], device="cuda")
    et.manual_seed(6)
    with on_device_only("cuda", allow_scalar_reads=True):  # the weight checks read back flags
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
    """poisson on the device (Knuth's method below rate 10, PTRS above): whole counts whose mean
    and variance are the rate, reproducible; rate 0 gives 0 and a huge rate itself."""
    et.manual_seed(6)
    rates = et.full((2000,), rate, device="cuda")
    with on_device_only("cuda", allow_scalar_reads=True):  # the rate check reads back one flag
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


@pytest.mark.gpu
def test_large_launches_on_a_gpu_match_one_block_and_have_the_right_moments():
    """On a real GPU: a launch of many blocks gives one thread's numbers, and 4M draws have their moments."""
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
            x = host(SAMPLERS[name](dtype, 1 << 22, "cuda")).astype(np.float64)
            assert abs(x.mean() - mean) < 5 * std / 2 ** 11 + (2e-3 if dtype is et.float16 else 0), (name, dtype)
            assert abs(x.std() - std) < 0.01 * std, (name, dtype)
