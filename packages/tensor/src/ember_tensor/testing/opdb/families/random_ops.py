"""Random sampling: rand, randn, randint, bernoulli, multinomial, randperm and normal.

No reference: CUDA's Philox stream is not the CPU's (as in PyTorch), so each entry gives
a property check of one draw — its range and loose moments. A mean is held within six
standard errors of its expectation and a variance within 25%: loose enough to pass for
every seed the tests use, tight enough to catch a wrong distribution or scale."""
import numpy as np

import ember_tensor as et

from ..core import I64, NP
from .info import FamilyOpInfo, O, S

__all__ = ["RANDOM_DB"]

_N = 2000  # enough for the moments, small enough for the CUDA simulator
_MOMENTS = 100  # the fewest values whose moments are checked


def _mean_near(values, mean, var, what):
    x = values.astype(np.float64)
    assert abs(x.mean() - mean) < 6 * np.sqrt(var / x.size), f"{what}: mean {x.mean():.4f}, expected {mean}"


def _moments(values, mean, var, what):
    if values.size < _MOMENTS:  # a 0-d or tiny draw has no moments to speak of; its range is checked
        return
    _mean_near(values, mean, var, what)
    spread = values.astype(np.float64).var()
    assert abs(spread / var - 1) < 0.25, f"{what}: variance {spread:.4f}, not {var}"


# --- property checks ----------------------------------------------------------------------


def _check_rand(values, sample, dtype):
    assert values.shape == sample.kwargs["size"]
    assert np.all((values >= 0) & (values < 1)), "rand: outside [0, 1)"
    _moments(values, 0.5, 1 / 12, "rand")


def _check_randn(values, sample, dtype):
    assert values.shape == sample.kwargs["size"]
    _moments(values, 0.0, 1.0, "randn")


def _check_randint(values, sample, dtype):
    low, high = sample.kwargs["low"], sample.kwargs["high"]
    assert values.shape == sample.kwargs["size"]
    assert np.all((values >= low) & (values < high)), f"randint: outside [{low}, {high})"
    if values.size >= _MOMENTS:
        assert set(np.unique(values)) == set(range(low, high)), "randint: a value in range never drawn"
    _moments(values, (low + high - 1) / 2, ((high - low) ** 2 - 1) / 12, "randint")


def _check_bernoulli(values, sample, dtype):
    assert values.shape == sample.input.value.shape
    p = sample.input.value.astype(np.float64)
    assert set(np.unique(values)) <= {0, 1}, "bernoulli: not 0 or 1"
    assert np.all(values[p == 0] == 0) and np.all(values[p == 1] == 1), "bernoulli: p of 0 or 1 not exact"
    free = (p > 0) & (p < 1)
    _mean_near(values[free] - p[free], 0.0, float(np.mean(p[free] * (1 - p[free]))), "bernoulli")


def _check_multinomial(values, sample, dtype):
    probs = sample.input.value.astype(np.float64)
    n, replacement = sample.kwargs["num_samples"], sample.kwargs.get("replacement", False)
    rows = probs.reshape(-1, probs.shape[-1])
    drawn = values.reshape(-1, n)
    assert values.shape == probs.shape[:-1] + (n,)
    for p, d in zip(rows, drawn):
        assert np.all(p[d] > 0), "multinomial: drew a category of probability 0"
        if not replacement:
            assert len(set(d)) == n, "multinomial: repeated a category without replacement"
        else:  # frequencies near the normalised probabilities
            q = p / p.sum()
            freq = np.bincount(d, minlength=len(p)) / n
            assert np.all(np.abs(freq - q) < 6 * np.sqrt(q * (1 - q) / n) + 1e-12), f"multinomial: {freq} vs {q}"


def _check_randperm(values, sample, dtype):
    n = sample.kwargs["n"]
    np.testing.assert_array_equal(np.sort(values), np.arange(n), err_msg="randperm: not a permutation")
    if n > 8:
        assert not np.array_equal(values, np.arange(n)), "randperm: the identity"


def _check_normal(values, sample, dtype):
    mean, std = (x.value.astype(np.float64) if isinstance(x, O) else x for x in (sample.input, sample.args[0]))
    assert values.shape == sample.kwargs.get("size", np.broadcast_shapes(np.shape(mean), np.shape(std)))
    z = (values.astype(np.float64) - mean) / std
    _moments(z, 0.0, 1.0, "normal")


# --- the ops: a size-only sampler is told its device; the others follow their operands --


def _rand(size, dtype, device):
    return et.rand(size, dtype=dtype, device=device)


def _randn(size, dtype, device):
    return et.randn(size, dtype=dtype, device=device)


def _randint(low, high, size, device):
    return et.randint(low, high, size, device=device)


def _bernoulli(p, device):
    return et.bernoulli(p)


def _multinomial(probs, num_samples, replacement=False, device=None):
    return et.multinomial(probs, num_samples, replacement=replacement)


def _randperm(n, device):
    return et.randperm(n, device=device)


def _normal(mean, std, size=None, dtype=None, device=None):
    if isinstance(mean, et.Tensor):
        return et.normal(mean, std)
    return et.normal(mean, std, size, dtype=dtype, device=device)


# --- samples ------------------------------------------------------------------------------


def _sized(op, dtype, rng):
    yield S(None, kwargs={"size": (40, _N // 40), "dtype": dtype}, name="2-d")
    yield S(None, kwargs={"size": (), "dtype": dtype}, name="0-d")
    yield S(None, kwargs={"size": (0, 3), "dtype": dtype}, name="empty")


def _randint_samples(op, dtype, rng):
    yield S(None, kwargs={"low": -3, "high": 5, "size": (_N,)}, name="range")
    yield S(None, kwargs={"low": 0, "high": 2, "size": (0,)}, name="empty")


def _bernoulli_samples(op, dtype, rng):
    p = rng.uniform(0.1, 0.9, (40, _N // 40)).astype(NP[dtype])
    p[0, :5], p[1, :5] = 0, 1
    yield S(O(p), name="probabilities, exact 0 and 1")
    yield S(O(p, "transposed"), name="transposed")
    yield S(O(np.array(0.5, NP[dtype])), name="0-d")


def _multinomial_samples(op, dtype, rng):
    probs = rng.uniform(0.5, 2, (3, 6)).astype(NP[dtype])
    probs[:, 1] = 0
    yield S(O(probs), kwargs={"num_samples": 4}, name="without replacement, a zero category")
    yield S(O(probs[0].copy(), "stepped"), kwargs={"num_samples": _N, "replacement": True},
            name="with replacement, stepped")
    yield S(O(probs, "transposed"), kwargs={"num_samples": 2}, name="transposed")
    yield S(O(probs[:0]), kwargs={"num_samples": 2}, name="empty batch")


def _randperm_samples(op, dtype, rng):
    yield S(None, kwargs={"n": 50}, name="permutation")
    yield S(None, kwargs={"n": 260}, name="longer than a CUDA block")
    yield S(None, kwargs={"n": 0}, name="empty")


def _normal_samples(op, dtype, rng):
    yield S(2.0, (3.0,), {"size": (_N,), "dtype": dtype}, name="numbers, size")
    mean = rng.uniform(-5, 5, (_N // 40, 40)).astype(NP[dtype])
    yield S(O(mean, "transposed"), (0.5,), name="tensor mean, transposed")
    yield S(O(np.array(1.0, NP[dtype])), (2.0,), name="0-d mean")
    std = rng.uniform(0.5, 3, (40,)).astype(NP[dtype])
    yield S(O(mean), (O(np.broadcast_to(std, mean.shape).copy(), "stepped"),),
            name="tensor mean and std, stepped")


def _int64(dtype):
    return I64


RANDOM_DB = [
    FamilyOpInfo("rand", "random", _rand, check=_check_rand, sample_inputs_func=_sized),
    FamilyOpInfo("randn", "random", _randn, check=_check_randn, sample_inputs_func=_sized),
    FamilyOpInfo("randint", "random", _randint, dtypes=(I64,), check=_check_randint,
                 sample_inputs_func=_randint_samples),
    # bernoulli and multinomial read back one flag on CUDA: are the probabilities valid?
    FamilyOpInfo("bernoulli", "random", _bernoulli, check=_check_bernoulli, sample_inputs_func=_bernoulli_samples,
                 reads_scalars=True),
    FamilyOpInfo("multinomial", "random", _multinomial, check=_check_multinomial, result_dtype=_int64,
                 sample_inputs_func=_multinomial_samples, reads_scalars=True),
    FamilyOpInfo("randperm", "random", _randperm, dtypes=(I64,), check=_check_randperm,
                 sample_inputs_func=_randperm_samples),
    # A tensor std is checked (all >= 0) by reading back one flag, to raise the CPU's error.
    FamilyOpInfo("normal", "random", _normal, check=_check_normal, sample_inputs_func=_normal_samples,
                 reads_scalars=True),
]
