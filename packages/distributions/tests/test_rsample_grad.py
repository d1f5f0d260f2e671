"""Reparameterised samples are differentiable: pathwise gradients against central finite
differences with the noise held fixed (a re-seeded generator), and the implicit
reparameterisation gradients of Gamma, Beta and Dirichlet against a SciPy-free reference
and against identities of their means."""
import math

import numpy as np
import pytest

import ember_distributions as D
import ember_tensor as et
from ember_distributions._sampling import _standard_gamma_grad

SEED = 1234


def _f64(*values):
    return et.tensor(values, dtype=et.float64)


# Distributions whose rsample is a smooth function of (parameters, noise): name, builder of
# a distribution from its parameter tensors, parameter values.
PATHWISE = [
    ("Normal", lambda a, b: D.Normal(a, b), [[0.3, -1.0], [1.5, 0.4]]),
    ("LogNormal", lambda a, b: D.LogNormal(a, b), [[0.3, -1.0], [0.5, 0.4]]),
    ("Laplace", lambda a, b: D.Laplace(a, b), [[0.3, -1.0], [1.5, 0.4]]),
    ("Cauchy", lambda a, b: D.Cauchy(a, b), [[0.3, -1.0], [1.5, 0.4]]),
    ("Uniform", lambda a, b: D.Uniform(a, a + b), [[0.3, -1.0], [1.5, 0.4]]),
    ("Exponential", lambda a: D.Exponential(a), [[0.7, 2.0]]),
    ("HalfNormal", lambda a: D.HalfNormal(a), [[0.7, 2.0]]),
    ("HalfCauchy", lambda a: D.HalfCauchy(a), [[0.7, 2.0]]),
    ("Gumbel", lambda a, b: D.Gumbel(a, b), [[0.3, -1.0], [1.5, 0.4]]),
    ("Weibull", lambda a, b: D.Weibull(a, b), [[0.8, 1.5], [1.5, 0.7]]),
    ("Pareto", lambda a, b: D.Pareto(a, b), [[0.8, 1.5], [1.5, 0.7]]),
    ("Kumaraswamy", lambda a, b: D.Kumaraswamy(a, b), [[0.8, 1.5], [1.5, 0.7]]),
    ("ContinuousBernoulli", lambda a: D.ContinuousBernoulli(a), [[0.2, 0.8]]),
    ("RelaxedBernoulli", lambda a: D.RelaxedBernoulli(_f64(0.5), a), [[0.2, 0.8]]),
    ("RelaxedOneHotCategorical", lambda a: D.RelaxedOneHotCategorical(_f64(0.5), logits=a), [[0.2, -0.8, 1.0]]),
    ("MultivariateNormal", lambda a, b: D.MultivariateNormal(a, scale_tril=b.reshape(2, 2).tril()),
     [[0.3, -1.0], [1.5, 0.0, 0.4, 0.8]]),
    ("Wishart", lambda a: D.Wishart(_f64(4.0), scale_tril=a.reshape(2, 2).tril()), [[1.5, 0.0, 0.4, 0.8]]),
    ("InverseGamma_rate", lambda a: D.InverseGamma(_f64(2.0, 3.0), a), [[0.7, 2.0]]),
    ("GeneralizedPareto", lambda a, b, c: D.GeneralizedPareto(a, b, c), [[0.3, -1.0], [1.5, 0.4], [0.2, -0.3]]),
    ("LowRankMultivariateNormal", lambda a, b, c: D.LowRankMultivariateNormal(a, b.reshape(2, 1), c),
     [[0.3, -1.0], [0.5, -0.7], [0.4, 0.8]]),
]


def _draw(build, params, weights):
    et.manual_seed(SEED)
    sample = build(*params).rsample((3,))
    return (sample * weights).sum()


@pytest.mark.parametrize("name, build, values", PATHWISE, ids=[c[0] for c in PATHWISE])
def test_pathwise_gradient_matches_finite_differences(name, build, values):
    params = [et.tensor(v, dtype=et.float64, requires_grad=True) for v in values]
    shape = build(*params).rsample((3,)).shape
    weights = et.tensor(np.random.default_rng(0).standard_normal(tuple(shape)), dtype=et.float64)
    _draw(build, params, weights).backward()
    h = 1e-6
    for index, value in enumerate(values):
        for j in range(len(value)):
            up = [np.array(v, dtype=float) for v in values]
            down = [np.array(v, dtype=float) for v in values]
            up[index][j] += h
            down[index][j] -= h
            f_up = float(_draw(build, [et.tensor(v) for v in up], weights))
            f_down = float(_draw(build, [et.tensor(v) for v in down], weights))
            numeric = (f_up - f_down) / (2 * h)
            assert abs(float(params[index].grad[j]) - numeric) <= 1e-5 * max(1.0, abs(numeric)), (index, j)


def test_normal_rsample_gradient_identities():
    loc, scale = _f64(0.5, -1.0).requires_grad_(), _f64(2.0, 0.3).requires_grad_()
    x = D.Normal(loc, scale).rsample((7,))
    x.sum().backward()
    assert loc.grad.tolist() == [7.0, 7.0]
    eps = (x.detach() - loc.detach()) / scale.detach()
    np.testing.assert_allclose(scale.grad.tolist(), eps.sum(0).tolist(), rtol=1e-12)


def _lower_incomplete_gamma(a, x, terms=400):
    """P(a, x) by its power series, in plain Python (the reference needs no SciPy)."""
    total, term = 0.0, 1.0 / a
    for n in range(terms):
        total += term
        term *= x / (a + n + 1)
    return total * math.exp(a * math.log(x) - x - math.lgamma(a))


@pytest.mark.parametrize("alpha, x", [(0.3, 0.05), (0.3, 1.2), (1.0, 0.7), (2.5, 0.4), (2.5, 6.0), (9.0, 12.0),
                                      (40.0, 33.0), (99.0, 110.0)])
def test_gamma_implicit_gradient_matches_incomplete_gamma_reference(alpha, x):
    # dx/dalpha = -(dP/dalpha) / density, with dP/dalpha by central differences.
    h = 1e-5 * alpha
    dP = (_lower_incomplete_gamma(alpha + h, x) - _lower_incomplete_gamma(alpha - h, x)) / (2 * h)
    density = math.exp((alpha - 1) * math.log(x) - x - math.lgamma(alpha))
    expected = -dP / density
    got = float(_standard_gamma_grad(_f64(x), _f64(alpha)))
    assert abs(got - expected) <= 1e-6 * max(1.0, abs(expected))


def test_gamma_implicit_gradient_large_concentration_is_close():
    # Above concentration 100, Wilson-Hilferty: d x / d alpha is about 1 near the mean.
    got = _standard_gamma_grad(_f64(500.0, 520.0), _f64(500.0, 500.0))
    assert np.allclose(got.tolist(), [1.0, 1.0], atol=0.05)


def _per_sample_mean_gradient(build, param_values, n=4000):
    """Per-sample gradients of one draw each, from a parameter expanded to n copies."""
    param = et.tensor(np.tile(param_values, (n, 1)), dtype=et.float64, requires_grad=True)
    build(param).rsample().sum().backward()
    return np.asarray(param.grad.tolist())


def _mean_within_standard_errors(per_sample, expected, k=6.0):
    mean, sd = per_sample.mean(0), per_sample.std(0)
    assert (np.abs(mean - expected) <= k * sd / math.sqrt(per_sample.shape[0]) + 1e-9).all(), (mean, expected)


@pytest.mark.parametrize("alpha", [0.2, 1.0, 4.0, 150.0])
def test_gamma_rsample_gradient_is_unbiased(alpha):
    # E[x] = alpha / rate, so E[dx/dalpha] = 1 / rate and E[dx/drate] = -alpha / rate^2.
    grads = _per_sample_mean_gradient(lambda p: D.Gamma(p[:, 0], p[:, 1]), [alpha, 2.0])
    _mean_within_standard_errors(grads, np.array([0.5, -alpha / 4]))


def test_beta_rsample_gradient_is_unbiased():
    a, b = 2.0, 0.7
    grads = _per_sample_mean_gradient(lambda p: D.Beta(p[:, 0], p[:, 1]), [a, b])
    _mean_within_standard_errors(grads, np.array([b, -a]) / (a + b) ** 2)


def test_dirichlet_rsample_gradient_is_unbiased():
    conc = np.array([0.5, 2.0, 3.0])
    n = 4000
    param = et.tensor(np.tile(conc, (n, 1)), dtype=et.float64, requires_grad=True)
    # d E[x_0] / d conc = (delta_0j * total - conc_0) / total^2.
    D.Dirichlet(param).rsample()[:, 0].sum().backward()
    total = conc.sum()
    expected = (np.eye(3)[0] * total - conc[0]) / total ** 2
    _mean_within_standard_errors(np.asarray(param.grad.tolist()), expected)


def test_student_t_and_chi2_rsample_reach_df():
    df = _f64(3.0, 6.0).requires_grad_()
    D.StudentT(df).rsample((5,)).pow(2).sum().backward()
    assert bool(et.isfinite(df.grad).all()) and bool((df.grad != 0).all())
    df2 = _f64(3.0).requires_grad_()
    # E[Chi2(df)] = df: the gradient of the mean of many draws is about 1.
    D.Chi2(df2).rsample((4000,)).mean().backward()
    assert abs(float(df2.grad) - 1.0) < 0.15


def test_straight_through_passes_gradients():
    logits = _f64(0.1, 0.5, -0.2).requires_grad_()
    dist = D.OneHotCategoricalStraightThrough(logits=logits)
    sample = dist.rsample()
    assert sorted(sample.tolist()) == [0.0, 0.0, 1.0]
    (sample * _f64(1.0, 2.0, 3.0)).sum().backward()
    assert logits.grad is not None and bool((logits.grad != 0).any())


def test_sample_has_no_graph():
    loc = _f64(0.0).requires_grad_()
    assert not D.Normal(loc, 1.0).sample((2,)).requires_grad
    assert D.Normal(loc, 1.0).rsample((2,)).requires_grad
