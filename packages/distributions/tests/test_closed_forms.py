"""log_prob, cdf, moments and entropies against closed forms written here with Python's math
module (no SciPy, no PyTorch), float64."""
import math

import numpy as np
import pytest

import ember_distributions as D
import ember_tensor as et


def t(*values):
    return et.tensor(values, dtype=et.float64)


def close(actual, expected, rtol=1e-9):
    np.testing.assert_allclose(np.asarray(actual.tolist(), dtype=float), expected, rtol=rtol, atol=1e-12)


def normal_log_pdf(x, mu, s):
    return -((x - mu) ** 2) / (2 * s * s) - math.log(s) - 0.5 * math.log(2 * math.pi)


def gamma_log_pdf(x, a, b):
    return a * math.log(b) + (a - 1) * math.log(x) - b * x - math.lgamma(a)


def beta_log_pdf(x, a, b):
    return (a - 1) * math.log(x) + (b - 1) * math.log(1 - x) - (math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b))


def binom_log_pmf(k, n, p):
    return (math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) + k * math.log(p)
            + (n - k) * math.log(1 - p))


LOG_PROB_CASES = [
    ("Normal", lambda: D.Normal(t(0.5, -1.0), t(2.0, 0.3)), t(1.0, -1.2),
     [normal_log_pdf(1.0, 0.5, 2.0), normal_log_pdf(-1.2, -1.0, 0.3)]),
    ("LogNormal", lambda: D.LogNormal(t(0.5), t(2.0)), t(1.5), [normal_log_pdf(math.log(1.5), 0.5, 2.0) - math.log(1.5)]),
    ("HalfNormal", lambda: D.HalfNormal(t(2.0)), t(1.5), [normal_log_pdf(1.5, 0, 2.0) + math.log(2)]),
    ("Laplace", lambda: D.Laplace(t(1.0), t(2.0)), t(-1.0), [-math.log(4.0) - 1.0]),
    ("Cauchy", lambda: D.Cauchy(t(1.0), t(2.0)), t(3.0), [-math.log(math.pi * 2.0 * 2.0)]),
    ("Exponential", lambda: D.Exponential(t(2.5)), t(0.4), [math.log(2.5) - 1.0]),
    ("Gamma", lambda: D.Gamma(t(2.5), t(1.5)), t(0.7), [gamma_log_pdf(0.7, 2.5, 1.5)]),
    ("Chi2", lambda: D.Chi2(t(3.0)), t(0.7), [gamma_log_pdf(0.7, 1.5, 0.5)]),
    ("Beta", lambda: D.Beta(t(2.5), t(1.5)), t(0.3), [beta_log_pdf(0.3, 2.5, 1.5)]),
    ("Dirichlet", lambda: D.Dirichlet(t(2.5, 1.5)), t(0.3, 0.7), beta_log_pdf(0.3, 2.5, 1.5)),
    ("Uniform", lambda: D.Uniform(t(-1.0), t(3.0)), t(0.5), [-math.log(4.0)]),
    ("Bernoulli", lambda: D.Bernoulli(t(0.3, 0.3)), t(1.0, 0.0), [math.log(0.3), math.log(0.7)]),
    ("Binomial", lambda: D.Binomial(7, t(0.3)), t(2.0), [binom_log_pmf(2, 7, 0.3)]),
    ("Geometric", lambda: D.Geometric(t(0.3)), t(2.0), [2 * math.log(0.7) + math.log(0.3)]),
    ("Poisson", lambda: D.Poisson(t(2.5)), t(3.0), [3 * math.log(2.5) - 2.5 - math.log(6)]),
    ("Categorical", lambda: D.Categorical(t(1.0, 3.0)), et.tensor(1), math.log(0.75)),
    ("NegativeBinomial", lambda: D.NegativeBinomial(t(3.0), t(0.4)), t(2.0),
     [math.lgamma(5) - math.lgamma(3) - math.lgamma(3) + 3 * math.log(0.6) + 2 * math.log(0.4)]),
    ("StudentT", lambda: D.StudentT(t(4.0), t(0.0), t(1.0)), t(1.0),
     [math.lgamma(2.5) - math.lgamma(2.0) - 0.5 * math.log(4 * math.pi) - 2.5 * math.log(1.25)]),
    ("Gumbel", lambda: D.Gumbel(t(0.5), t(2.0)), t(1.0), [-(0.25) - math.exp(-0.25) - math.log(2.0)]),
    ("Weibull", lambda: D.Weibull(t(2.0), t(1.5)), t(1.0),
     [math.log(1.5 / 2.0) + 0.5 * math.log(0.5) - 0.5 ** 1.5]),
    ("Pareto", lambda: D.Pareto(t(1.0), t(3.0)), t(2.0), [math.log(3.0) - 4 * math.log(2.0)]),
    ("VonMises", lambda: D.VonMises(t(0.0), t(1.0)), t(0.0), [1.0 - math.log(2 * math.pi) - math.log(1.2660658777520082)]),
    ("Kumaraswamy", lambda: D.Kumaraswamy(t(2.0), t(3.0)), t(0.5),
     [math.log(6.0) + math.log(0.5) + 2 * math.log(0.75)]),
    ("MultivariateNormal", lambda: D.MultivariateNormal(t(0.0, 0.0), et.eye(2, dtype=et.float64) * 4), t(2.0, 0.0),
     normal_log_pdf(2.0, 0, 2.0) + normal_log_pdf(0.0, 0, 2.0)),
    ("Multinomial", lambda: D.Multinomial(3, t(0.2, 0.8)), t(1.0, 2.0), binom_log_pmf(1, 3, 0.2)),
]


@pytest.mark.parametrize("name, build, value, expected", LOG_PROB_CASES, ids=[c[0] for c in LOG_PROB_CASES])
def test_log_prob_closed_form(name, build, value, expected):
    # log I0 comes from Abramowitz and Stegun's polynomials (relative error below 1e-7), as in PyTorch.
    close(build().log_prob(value), expected, rtol=1e-7 if name == "VonMises" else 1e-9)


MOMENT_CASES = [
    # (name, distribution, mean, variance, entropy)
    ("Normal", lambda: D.Normal(t(0.5), t(2.0)), [0.5], [4.0], [0.5 * math.log(2 * math.pi * math.e * 4)]),
    ("Exponential", lambda: D.Exponential(t(2.0)), [0.5], [0.25], [1 - math.log(2.0)]),
    ("Gamma", lambda: D.Gamma(t(3.0), t(2.0)), [1.5], [0.75], None),
    ("Beta", lambda: D.Beta(t(2.0), t(3.0)), [0.4], [6 / (25 * 6)], None),
    ("Uniform", lambda: D.Uniform(t(-1.0), t(3.0)), [1.0], [16 / 12], [math.log(4.0)]),
    ("Laplace", lambda: D.Laplace(t(1.0), t(2.0)), [1.0], [8.0], [1 + math.log(4.0)]),
    ("Poisson", lambda: D.Poisson(t(2.5)), [2.5], [2.5], None),
    ("Binomial", lambda: D.Binomial(10, t(0.3)), [3.0], [2.1], None),
    ("Geometric", lambda: D.Geometric(t(0.25)), [3.0], [12.0], None),
    ("Gumbel", lambda: D.Gumbel(t(0.0), t(1.0)), [0.5772156649015329], [math.pi ** 2 / 6], [1.5772156649015329]),
    ("Pareto", lambda: D.Pareto(t(1.0), t(3.0)), [1.5], [0.75], [math.log(1 / 3) + 1 / 3 + 1]),
    ("Weibull", lambda: D.Weibull(t(1.0), t(1.0)), [1.0], [1.0], [1.0]),
    ("Kumaraswamy", lambda: D.Kumaraswamy(t(1.0), t(1.0)), [0.5], [1 / 12], [0.0]),
    ("ContinuousBernoulli", lambda: D.ContinuousBernoulli(t(0.5)), [0.5], [1 / 12], [0.0]),
]


@pytest.mark.parametrize("name, build, mean, variance, entropy", MOMENT_CASES, ids=[c[0] for c in MOMENT_CASES])
def test_moments_closed_form(name, build, mean, variance, entropy):
    dist = build()
    close(dist.mean, mean)
    close(dist.variance, variance)
    close(dist.stddev, np.sqrt(variance))
    if entropy is not None:
        close(dist.entropy(), entropy)


def test_kumaraswamy_mode_is_the_density_maximum():
    # ((a - 1) / (a b - 1))^(1/a); PyTorch 2.13 returns NaN here (it takes log1p(-b)).
    a, b = 2.0, 3.0
    dist = D.Kumaraswamy(t(a), t(b))
    mode = ((a - 1) / (a * b - 1)) ** (1 / a)
    close(dist.mode, [mode])
    grid = et.tensor(np.linspace(0.01, 0.99, 99), dtype=et.float64)
    assert abs(float(grid[dist.log_prob(grid).argmax()]) - mode) < 0.011


@pytest.mark.parametrize("build, x", [
    (lambda: D.Normal(t(0.5), t(2.0)), 1.3), (lambda: D.Laplace(t(0.5), t(2.0)), -1.3),
    (lambda: D.Cauchy(t(0.5), t(2.0)), 1.3), (lambda: D.Exponential(t(2.0)), 0.4),
    (lambda: D.Uniform(t(-1.0), t(3.0)), 0.5), (lambda: D.Gumbel(t(0.5), t(2.0)), 1.3),
    (lambda: D.LogNormal(t(0.5), t(2.0)), 1.3), (lambda: D.HalfNormal(t(2.0)), 1.3),
    (lambda: D.Weibull(t(2.0), t(1.5)), 1.3), (lambda: D.Pareto(t(1.0), t(3.0)), 1.3),
    (lambda: D.ContinuousBernoulli(t(0.3)), 0.4),
], ids=["Normal", "Laplace", "Cauchy", "Exponential", "Uniform", "Gumbel", "LogNormal", "HalfNormal", "Weibull",
        "Pareto", "ContinuousBernoulli"])
def test_cdf_icdf_round_trip_and_derivative_is_density(build, x):
    dist = build()
    value = t(x).requires_grad_()
    cdf = dist.cdf(value)
    close(dist.icdf(cdf.detach()), [x], rtol=1e-7)
    cdf.sum().backward()
    close(value.grad, [math.exp(float(dist.log_prob(t(x))))], rtol=1e-6)


def test_perplexity_is_exp_entropy():
    dist = D.Categorical(t(0.25, 0.25, 0.5))
    close(dist.perplexity(), math.exp(1.5 * math.log(2)))


def test_binomial_entropy_sums_over_support():
    probs = np.array([binom_log_pmf(k, 4, 0.3) for k in range(5)])
    close(D.Binomial(4, t(0.3)).entropy(), [-(np.exp(probs) * probs).sum()])


def test_enumerate_support_shapes():
    assert D.Bernoulli(t(0.3, 0.4)).enumerate_support().tolist() == [[0.0, 0.0], [1.0, 1.0]]
    assert tuple(D.Categorical(et.ones(2, 3)).enumerate_support(expand=False).shape) == (3, 1)
    assert tuple(D.OneHotCategorical(et.ones(2, 3)).enumerate_support().shape) == (3, 2, 3)
    assert D.Binomial(2, t(0.5)).enumerate_support().tolist() == [[0.0], [1.0], [2.0]]


def test_generalized_pareto_closed_forms():
    # xi != 0: f(x) = (1 + xi z)^(-1/xi - 1) / scale, F(x) = 1 - (1 + xi z)^(-1/xi); xi = 0: Exponential.
    loc, scale, xi = 0.5, 2.0, 0.3
    dist = D.GeneralizedPareto(t(loc, loc), t(scale, scale), t(xi, 0.0))
    x = 3.0
    z = (x - loc) / scale
    close(dist.log_prob(t(x, x)), [(-1 / xi - 1) * math.log1p(xi * z) - math.log(scale), -z - math.log(scale)])
    close(dist.cdf(t(x, x)), [1 - (1 + xi * z) ** (-1 / xi), 1 - math.exp(-z)])
    # xi = -1 is Uniform(loc, loc + scale).
    uniform = D.GeneralizedPareto(t(loc), t(scale), t(-1.0))
    close(uniform.log_prob(t(1.0)), [-math.log(scale)])
    assert uniform.support.check(t(loc + scale + 0.1)).tolist() == [False]


@pytest.mark.parametrize("dtype, rtol", [(et.float32, 2e-6), (et.float64, 1e-12)], ids=["float32", "float64"])
def test_normal_log_prob_fused_and_composite_paths(dtype, rtol):
    # Without a graph to record, log_prob is one fused kernel; with one, the composite.
    # Both keep the dtype and broadcast value against the parameters, strided or 0-d.
    loc = et.tensor([[0.5, -1.0, 2.0], [0.0, 3.0, -2.0]], dtype=dtype).T  # non-contiguous (3, 2)
    scale = et.tensor(0.7, dtype=dtype)  # 0-d
    value = et.tensor([[1.0, -1.2], [0.3, 2.0], [-4.0, 0.0]], dtype=dtype)
    expected = [[normal_log_pdf(float(v), float(m), 0.7) for v, m in zip(row_v, row_m)]
                for row_v, row_m in zip(value.tolist(), loc.tolist())]
    fused = D.Normal(loc, scale).log_prob(value)
    composite = D.Normal(loc.clone().requires_grad_(), scale).log_prob(value)
    for result in (fused, composite):
        assert result.dtype == dtype and tuple(result.shape) == (3, 2)
        np.testing.assert_allclose(np.asarray(result.tolist()), expected, rtol=rtol, atol=0)
    assert composite.requires_grad and not fused.requires_grad
