"""The CPU's float32 normal kernel (`_backends/cpu/kernels/normal.py`): its float32 log and
sin/cos polynomials against NumPy's float64 functions, whole blocks against a float64
Box-Muller computed in NumPy from the same counter-based words, and randn's numbers
under every thread budget (odd sizes, short last blocks) with their distribution."""
import math

import numpy as np
import pytest
from numba import njit

import ember_tensor as torch
from ember_tensor._backends.cpu.kernels import normal as kernel

_log32 = kernel._log32
_sincos_2pi = kernel._sincos_2pi


@njit
def _logs(u):
    out = np.empty_like(u)
    for i in range(u.shape[0]):
        out[i] = _log32(u[i])
    return out


@njit
def _sincos(steps):
    out = np.empty((steps.shape[0], 2), np.float32)
    for i in range(steps.shape[0]):
        out[i, 0], out[i, 1] = _sincos_2pi(steps[i])
    return out


def _reference_block(key, size):
    """A block of `size` normals in float64 from the kernel's words: SplitMix64 of
    key + (j + 1) * gamma, 24 bits for the radius's uniform and 24 for the angle."""
    half = (size + 1) // 2
    counter = np.arange(1, half + 1, dtype=np.uint64)
    z = np.uint64(key) + counter * kernel._GAMMA
    z = (z ^ (z >> np.uint64(30))) * kernel._MIX1
    z = (z ^ (z >> np.uint64(27))) * kernel._MIX2
    z = z ^ (z >> np.uint64(31))
    u = ((z >> np.uint64(40)).astype(np.float64) + 1) * 2.0 ** -24
    angle = 2 * np.pi * ((z >> np.uint64(8)) & np.uint64(0xFFFFFF)).astype(np.float64) * 2.0 ** -24
    radius = np.sqrt(-2 * np.log(u))
    return np.concatenate([radius * np.cos(angle), (radius * np.sin(angle))[:size - half]])


def test_log32_is_within_two_ulp_on_the_uniforms_range():
    # Every exponent the uniforms reach ((0, 1] on a 2**-24 grid), mantissas at random,
    # and the points where the range reduction switches (sqrt(1/2), 1).
    rng = np.random.default_rng(0)
    u = np.ldexp(rng.uniform(0.5, 1.0, 200_000), rng.integers(-23, 1, 200_000)).astype(np.float32)
    u = np.concatenate([u, np.float32([2.0 ** -24, 0.70710677, 0.7071068, 1.0 - 2.0 ** -24, 1.0])])
    got = _logs(u).astype(np.float64)
    want = np.log(u.astype(np.float64))
    ulp = np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)
    assert got[-1] == 0.0
    assert np.max(np.abs(got[:-1] - want[:-1]) / ulp[:-1]) <= 2.0


def test_sincos_matches_numpy_on_every_eighth_angle_and_each_quadrant_edge():
    edges = np.array([0, 1, (1 << 21) - 1, 1 << 21, (1 << 22) - 1, 1 << 22, (1 << 22) + 1,
                      3 << 21, 1 << 23, 3 << 22, (1 << 24) - 1], np.int32)
    steps = np.concatenate([np.arange(0, 1 << 24, 8, dtype=np.int32), edges])
    got = _sincos(steps).astype(np.float64)
    angle = 2 * np.pi * steps.astype(np.float64) * 2.0 ** -24
    assert np.max(np.abs(got[:, 0] - np.cos(angle))) < 2e-7
    assert np.max(np.abs(got[:, 1] - np.sin(angle))) < 2e-7


@pytest.mark.parametrize("size", [1, 2, 7, kernel.BLOCK, 2 * kernel.BLOCK + 3])
def test_blocks_match_a_float64_box_muller_from_the_same_words(size):
    keys = np.array([12345, -1 & ((1 << 63) - 1), 987654321], np.int64)
    out = np.empty(size, np.float32)
    blocks = -(-size // kernel.BLOCK)
    kernel.fill_standard_normal(keys, out, 0, blocks)
    want = np.concatenate([_reference_block(int(keys[b]), min(kernel.BLOCK, size - b * kernel.BLOCK))
                           for b in range(blocks)])
    np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("size", [3 * kernel.BLOCK + 5, 5 * kernel.BLOCK])
def test_randn_is_the_same_under_every_thread_budget(size):
    before = torch.get_num_threads()
    draws = []
    try:
        for n_threads in (1, 2, 3):
            torch.set_num_threads(n_threads)
            draws.append(torch.randn(size, generator=torch.Generator().manual_seed(7)).numpy())
    finally:
        torch.set_num_threads(before)
    np.testing.assert_array_equal(draws[0], draws[1])
    np.testing.assert_array_equal(draws[0], draws[2])


def test_randn_float32_moments_tails_and_kolmogorov_smirnov():
    x = torch.randn(1_000_000, generator=torch.Generator().manual_seed(19)).numpy().astype(np.float64)
    n = x.size
    # Tolerances of about five standard errors (var(z^k) of a normal: 2 for z^2, 15 for
    # z^3, 96 for z^4).
    assert abs(x.mean()) < 5 / math.sqrt(n)
    assert abs((x ** 2).mean() - 1) < 5 * math.sqrt(2 / n)
    assert abs((x ** 3).mean()) < 5 * math.sqrt(15 / n)
    assert abs((x ** 4).mean() - 3) < 5 * math.sqrt(96 / n)
    assert np.abs(x).max() <= 5.78  # sqrt(-2 log 2**-24): the smallest uniform's radius
    # The tail beyond 4 (P = 6.33e-5 on each side) is drawn at its rate.
    assert abs((np.abs(x) > 4).mean() - 2 * 3.167e-5) < 5 * math.sqrt(6.33e-5 / n)
    s = np.sort(x)
    cdf = 0.5 * (1 + np.vectorize(math.erf)(s / math.sqrt(2)))
    distance = max(np.max(np.arange(1, n + 1) / n - cdf), np.max(cdf - np.arange(n) / n))
    assert distance < 1.95 / math.sqrt(n)  # Kolmogorov-Smirnov at the 0.1% level
    # Neighbours (within a block, and a cosine with its sine half a block away) are
    # uncorrelated.
    assert abs(np.corrcoef(x[:-1], x[1:])[0, 1]) < 5 / math.sqrt(n)
    half = kernel.BLOCK // 2
    assert abs(np.corrcoef(x[:half], x[half:kernel.BLOCK])[0, 1]) < 5 / math.sqrt(half)
