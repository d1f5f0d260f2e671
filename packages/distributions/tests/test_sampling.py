"""Sample moments and frequencies within bounds that hold for any seed: each check allows
6 standard errors (estimated from the draws), so a correct sampler fails it with
probability of order 1e-8 whatever the seed."""
import math

import numpy as np
import pytest

import ember_distributions as D
import ember_tensor as et

from _cases import CASES

N = 20000


def _np(x):
    return np.asarray(x.tolist(), dtype=float)


def _within_standard_errors(samples, expected, k=6.0):
    """The mean of `samples` (over dim 0) is within k standard errors of `expected`."""
    mean, sd = samples.mean(0), samples.std(0)
    err = np.abs(mean - expected)
    bound = k * sd / math.sqrt(samples.shape[0]) + 1e-12
    assert (err <= bound).all(), f"sample mean {mean} vs {expected}, bound {bound}"


MOMENT_CASES = [c for c in CASES if "mean" in c.methods and "variance" in c.methods
                and c.name not in ("VonMises", "StudentT", "Pareto", "LogNormal", "InverseGamma", "FisherSnedecor")]  # heavy tails: below


@pytest.mark.parametrize("case", MOMENT_CASES, ids=repr)
def test_sample_mean_and_variance(case):
    dist = case.build("ember", D)
    samples = _np(dist.sample((N,)))
    assert samples.shape == (N,) + tuple(dist.batch_shape) + tuple(dist.event_shape)
    assert bool(dist.support.check(et.tensor(samples[:200], dtype=et.float64)).all())
    mean, variance = _np(dist.mean), _np(dist.variance)
    _within_standard_errors(samples, mean)
    # The variance as the mean of (x - mean)^2, with its own standard error.
    _within_standard_errors((samples - mean) ** 2, variance)


@pytest.mark.parametrize("build, probes", [
    (lambda: D.Cauchy(et.tensor([0.0, 2.0]), et.tensor([1.0, 0.5])), [-1.0, 0.3, 2.5]),
    (lambda: D.HalfCauchy(et.tensor([1.0, 0.5])), [0.3, 1.0, 4.0]),
    (lambda: D.Pareto(et.tensor([1.0, 2.0]), et.tensor([0.5, 3.0])), [2.5, 3.0, 10.0]),
    (lambda: D.LogNormal(et.tensor([0.0, 1.0]), et.tensor([3.0, 0.5])), [0.5, 2.0, 6.0]),
    (lambda: D.StudentT(et.tensor([0.8, 5.0])), [-1.0, 0.2, 3.0]),
    (lambda: D.Gamma(et.tensor([0.2, 30.0]), et.tensor([1.0, 2.0])), [0.01, 0.5, 15.0]),
    (lambda: D.InverseGamma(et.tensor([0.7, 3.0]), et.tensor([1.0, 2.0])), [0.3, 1.0, 5.0]),
], ids=["Cauchy", "HalfCauchy", "Pareto", "LogNormal", "StudentT", "Gamma", "InverseGamma"])
def test_heavy_tails_by_empirical_cdf(build, probes):
    dist = build()
    samples = _np(dist.sample((N,)))
    for probe in probes:
        if isinstance(dist, D.StudentT):
            # Student's t CDF by the regularized incomplete beta is not in ember: use the
            # symmetry P(X <= -x) = P(X >= x) instead.
            below, above = (samples <= -abs(probe)).astype(float), (samples >= abs(probe)).astype(float)
            _within_standard_errors(below - above, 0.0)
        else:
            expected = _np(dist.cdf(et.full(dist.batch_shape, probe)))
            _within_standard_errors((samples <= probe).astype(float), expected)


def test_categorical_frequencies():
    probs = np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]])
    samples = _np(D.Categorical(et.tensor(probs)).sample((N,)))
    for k in range(3):
        _within_standard_errors((samples == k).astype(float), probs[:, k])


@pytest.mark.parametrize("probs", [
    np.array([0.0, 0.3, 0.0, 0.7, 0.0]),  # zero weights first, between and last: never drawn
    np.array([0.05, 0.1, 0.15, 0.2, 0.5]),
    np.full(40, 1 / 40),  # more categories than the counting search takes: multinomial
], ids=["zero-weights", "five", "forty"])
def test_categorical_one_row_frequencies(probs):
    samples = _np(D.Categorical(et.tensor(probs)).sample((N,)))
    assert set(np.unique(samples)) <= set(np.flatnonzero(probs))
    for k in range(len(probs)):
        _within_standard_errors((samples == k).astype(float), probs[k])


def test_categorical_one_row_rejects_bad_weights_like_multinomial():
    with pytest.raises(RuntimeError, match="invalid multinomial distribution"):
        D.Categorical(et.tensor([0.5, -0.1, 0.6]), validate_args=False).sample((N,))


def test_von_mises_circular_moments():
    loc, kappa = np.array([0.5, -2.5, 3.0]), np.array([0.3, 2.0, 20.0])
    dist = D.VonMises(et.tensor(loc, dtype=et.float64), et.tensor(kappa, dtype=et.float64))
    samples = _np(dist.sample((N,)))
    assert (samples >= -math.pi).all() and (samples < math.pi).all()
    # E[cos(x - loc)] = I1(kappa) / I0(kappa) = 1 - circular variance; E[sin(x - loc)] = 0.
    _within_standard_errors(np.cos(samples - loc), 1 - _np(dist.variance))
    _within_standard_errors(np.sin(samples - loc), np.zeros(3))


def test_relaxed_bernoulli_thresholded_is_bernoulli():
    # x > 1/2 exactly when logit(U) + logits > 0, an event of probability `probs`.
    probs = np.array([0.1, 0.5, 0.8])
    samples = _np(D.RelaxedBernoulli(et.tensor(0.3), et.tensor(probs)).rsample((N,)))
    assert ((samples > 0) & (samples < 1)).all()
    _within_standard_errors((samples > 0.5).astype(float), probs)


def test_relaxed_one_hot_argmax_is_categorical():
    # The Gumbel-max trick: the argmax of a Concrete draw is Categorical(probs) at any temperature.
    probs = np.array([0.1, 0.2, 0.7])
    samples = _np(D.RelaxedOneHotCategorical(et.tensor(2.0), et.tensor(probs)).rsample((N,)))
    np.testing.assert_allclose(samples.sum(-1), 1.0, rtol=1e-5)
    winners = samples.argmax(-1)
    for k in range(3):
        _within_standard_errors((winners == k).astype(float), probs[k])


def test_lkj_cholesky_correlation_moments():
    # For dim 2 the correlation r has density proportional to (1 - r^2)^(eta - 1): E[r^2] = 1 / (2 eta + 1).
    eta = np.array([0.5, 1.0, 4.0])
    dist = D.LKJCholesky(2, et.tensor(eta, dtype=et.float64))
    L = dist.sample((N,))
    assert bool(dist.support.check(L).all())
    r = _np(L[..., 1, 0])
    _within_standard_errors(r ** 2, 1 / (2 * eta + 1))
    _within_standard_errors(r, np.zeros(3))


def test_mixture_same_family_moments():
    mix = D.Categorical(et.tensor([0.3, 0.7], dtype=et.float64))
    comp = D.Normal(et.tensor([-2.0, 1.0], dtype=et.float64), et.tensor([0.5, 1.0], dtype=et.float64))
    gmm = D.MixtureSameFamily(mix, comp)
    samples = _np(gmm.sample((N,)))
    _within_standard_errors(samples, float(gmm.mean))
    _within_standard_errors((samples - float(gmm.mean)) ** 2, float(gmm.variance))


def test_binomial_large_counts():
    # Counts above the direct-sum threshold go through the Beta order-statistic splitting.
    count, probs = np.array([40.0, 1000.0, 123456.0]), np.array([0.3, 0.01, 0.77])
    dist = D.Binomial(et.tensor(count, dtype=et.float64), et.tensor(probs, dtype=et.float64))
    samples = _np(dist.sample((4000,)))
    assert (samples == np.round(samples)).all() and (samples >= 0).all() and (samples <= count).all()
    _within_standard_errors(samples, count * probs)
    _within_standard_errors((samples - count * probs) ** 2, count * probs * (1 - probs))


def test_gamma_small_concentration_stays_positive():
    samples = D.Gamma(et.tensor([1e-3, 0.05]), et.tensor([1.0, 1.0])).sample((1000,))
    assert bool((samples > 0).all()) and bool(et.isfinite(samples).all())


def test_seeded_sampling_repeats():
    dist = D.Gamma(et.tensor([0.5, 3.0]), et.tensor([1.0, 2.0]))
    et.manual_seed(3)
    first = dist.sample((5,))
    et.manual_seed(3)
    assert et.equal(first, dist.sample((5,)))


def test_inverse_gamma_reciprocal_is_gamma():
    conc, rate = np.array([0.7, 3.0]), np.array([2.0, 0.5])
    samples = _np(D.InverseGamma(et.tensor(conc, dtype=et.float64), et.tensor(rate, dtype=et.float64)).sample((N,)))
    _within_standard_errors(1 / samples, conc / rate)


def test_fisher_snedecor_with_equal_dfs_has_median_one():
    # F(d, d) and 1 / F(d, d) have the same law, so P(X <= 1) = 1/2.
    df = et.tensor([1.5, 6.0], dtype=et.float64)
    samples = _np(D.FisherSnedecor(df, df).sample((N,)))
    _within_standard_errors((samples <= 1).astype(float), np.full(2, 0.5))
