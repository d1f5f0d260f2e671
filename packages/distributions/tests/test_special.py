"""The regularized lower incomplete gamma function P(a, x) behind Gamma.cdf and Chi2.cdf:
closed forms at integer and half-integer a (Python's math), PyTorch's
torch.special.gammainc over a wide grid and at its edges (where installed), and
PyTorch's gradient rules."""
import decimal
import math

import numpy as np
import pytest

import ember_autograd
import ember_distributions as D
import ember_tensor as et
from ember_distributions._special import gammainc


def _t(values, dtype=et.float64):
    return et.tensor(np.asarray(values, dtype=float), dtype=dtype)


def _np(x):
    return np.asarray(x.tolist(), dtype=float)


# x on both sides of a + 1 (series / continued fraction), near a, and far in both tails.
X = np.array([1e-8, 1e-3, 0.05, 0.5, 0.99, 1.0, 1.5, 2.0, 4.0, 5.0, 9.0, 10.0, 11.0, 29.0, 31.0, 45.0, 80.0, 300.0])


def _integer_a(n, x):
    # P(n, x) = e^-x sum_{k>=n} x^k / k! = 1 - e^-x sum_{k<n} x^k / k!, in 40 decimal
    # digits: the tail sum below x = n (no cancellation), one minus the head above.
    with decimal.localcontext() as context:
        context.prec = 40
        x = decimal.Decimal(x)
        if x < n:
            return float((-x).exp() * sum(x ** k / math.factorial(k) for k in range(n, n + 400)))
        return float(1 - (-x).exp() * sum(x ** k / math.factorial(k) for k in range(n)))


CLOSED_FORMS = {
    1.0: lambda x: -math.expm1(-x),
    0.5: lambda x: math.erf(math.sqrt(x)),
    1.5: lambda x: math.erf(math.sqrt(x)) - 2 * math.sqrt(x / math.pi) * math.exp(-x),
    2.0: lambda x: _integer_a(2, x),
    10.0: lambda x: _integer_a(10, x),
    30.0: lambda x: _integer_a(30, x),
}


@pytest.mark.parametrize("a", sorted(CLOSED_FORMS))
def test_matches_closed_forms(a):
    expected = [CLOSED_FORMS[a](x) for x in X]
    got = _np(gammainc(_t(np.full(X.shape, a)), _t(X)))
    # a = 1.5's closed form cancels for small x: there it is exact to ~1e-17 only.
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-16 if a == 1.5 else 1e-300)


def test_float32_in_float32_out_and_broadcast_0d_and_strided_inputs():
    a = _t([[0.5, 2.0], [10.0, 30.0]], et.float32).T  # non-contiguous
    got = gammainc(a, _t(3.0, et.float32))  # a 0-d x broadcast against it
    assert got.dtype == et.float32 and tuple(got.shape) == (2, 2)
    expected = [[CLOSED_FORMS[0.5](3.0), CLOSED_FORMS[10.0](3.0)], [CLOSED_FORMS[2.0](3.0), CLOSED_FORMS[30.0](3.0)]]
    np.testing.assert_allclose(_np(got), expected, rtol=1e-6, atol=1e-30)
    assert tuple(gammainc(_t(2.0), _t(1.0)).shape) == ()


def test_chi2_cdf_with_two_degrees_of_freedom_is_exponential():
    x = _t([0.1, 1.0, 7.0])
    np.testing.assert_allclose(_np(D.Chi2(_t(2.0)).cdf(x)), -np.expm1(-_np(x) / 2), rtol=1e-13)


def test_value_gradient_is_the_density_and_differentiable_again():
    dist = D.Gamma(_t([0.7, 3.0]), _t([2.0, 0.5]))
    value = _t([0.4, 5.0]).requires_grad_()
    (grad,) = ember_autograd.grad(dist.cdf(value).sum(), [value], create_graph=True)
    density = _np(dist.log_prob(value).exp())
    np.testing.assert_allclose(_np(grad), density, rtol=1e-12)
    # d density / dx = density * ((a - 1) / x - rate)
    (second,) = ember_autograd.grad(grad.sum(), [value])
    a, rate, x = np.array([0.7, 3.0]), np.array([2.0, 0.5]), np.array([0.4, 5.0])
    np.testing.assert_allclose(_np(second), density * ((a - 1) / x - rate), rtol=1e-10)


def test_concentration_gradient_raises_like_pytorch():
    concentration = _t([2.0]).requires_grad_()
    cdf = D.Gamma(concentration, _t([1.0])).cdf(_t([1.5]))
    assert cdf.requires_grad
    with pytest.raises(NotImplementedError, match="the derivative for 'igamma: input' is not implemented"):
        cdf.sum().backward()


def test_value_gradient_while_concentration_requires_grad():
    # As in PyTorch, only a gradient asked of the concentration itself raises.
    concentration, value = _t([2.0]).requires_grad_(), _t([1.5]).requires_grad_()
    dist = D.Gamma(concentration, _t([1.0]))
    cdf = dist.cdf(value)
    (grad,) = ember_autograd.grad(cdf.sum(), [value], retain_graph=True)
    np.testing.assert_allclose(_np(grad), _np(dist.log_prob(value).exp().detach()), rtol=1e-12)
    with pytest.raises(NotImplementedError, match="igamma: input"):
        ember_autograd.grad(cdf.sum(), [concentration])


def test_huge_concentration_near_the_mean_uses_the_normal_limit():
    # a = 1e8: the series would need ~86000 terms; the Wilson-Hilferty value is exact to
    # ~1e-10 here, and P(a, a) tends to 1/2 + 1/(3 sqrt(2 pi a)).
    a = 1e8
    got = float(gammainc(_t(a), _t(a)))
    assert abs(got - (0.5 + 1 / (3 * math.sqrt(2 * math.pi * a)))) < 1e-9


# -- against PyTorch (a test-only oracle) ------------------------------------------------------

A_GRID = np.array([1e-3, 0.05, 0.5, 1.0, 2.5, 7.0, 20.0, 50.0, 100.0, 1e3, 1e4, 1e5])
X_GRID = np.concatenate([[1e-12, 1e-4, 0.1, 1.0, 3.0, 30.0, 1e3, 1e5, 1e7],
                         np.outer(A_GRID, [0.5, 0.9, 0.99, 1.0, 1.01, 1.1, 2.0]).ravel()])


@pytest.mark.parametrize("dtype, rtol, atol", [("float64", 1e-8, 1e-300), ("float32", 2e-5, 1e-6)])
def test_matches_pytorch_on_a_grid(dtype, rtol, atol):
    torch = pytest.importorskip("torch")
    a, x = np.meshgrid(A_GRID, X_GRID)
    ours = gammainc(_t(a, getattr(et, dtype)), _t(x, getattr(et, dtype)))
    theirs = torch.special.gammainc(torch.tensor(a, dtype=getattr(torch, dtype)),
                                    torch.tensor(x, dtype=getattr(torch, dtype)))
    assert ours.dtype == getattr(et, dtype)
    # PyTorch's float64 values differ from the closed forms by up to ~1e-9 (relative) near
    # x = a; ours by ~1e-13 (test_matches_closed_forms).
    np.testing.assert_allclose(_np(ours), theirs.numpy(), rtol=rtol, atol=atol)


def test_edges_match_pytorch():
    torch = pytest.importorskip("torch")
    inf, nan = math.inf, math.nan
    pairs = [(0, 0), (0, 1), (0, inf), (1, 0), (1, -0.0), (1, inf), (-1, 1), (1, -1), (inf, 0), (inf, 1),
             (inf, inf), (nan, 1), (1, nan), (1e-300, 1e-300), (5, 1e-300), (1e-3, 1e300)]
    a, x = (np.array(v, dtype=float) for v in zip(*pairs))
    ours = _np(gammainc(_t(a), _t(x)))
    theirs = torch.special.gammainc(torch.tensor(a), torch.tensor(x)).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=0, equal_nan=True)


def test_gamma_cdf_gradients_match_pytorch():
    torch = pytest.importorskip("torch")
    conc, rate = np.array([0.3, 2.0, 40.0]), np.array([1.5, 0.7, 2.0])
    value = np.array([[0.2, 3.0, 18.0], [1.0, 0.5, 25.0]])
    grads = []
    for lib, dist_module in ((et, D), (torch, torch.distributions)):
        r = lib.tensor(rate, dtype=lib.float64, requires_grad=True)
        v = lib.tensor(value, dtype=lib.float64, requires_grad=True)
        cdf = dist_module.Gamma(lib.tensor(conc, dtype=lib.float64), r).cdf(v)
        cdf.sum().backward()
        grads.append([_np(cdf.detach()), _np(r.grad), _np(v.grad)])
    for ours, theirs in zip(*grads):
        np.testing.assert_allclose(ours, theirs, rtol=1e-8)
