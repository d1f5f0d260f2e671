"""``torch.special`` (issue 27): each function against mpmath at 40 digits, in float64
and float32, on the CPU and on CUDA (Numba's simulator in CI); the edge values PyTorch
gives (0, +-inf, NaN, poles, tails); dtype promotion, out=, 0-d and non-contiguous
inputs; the names that are existing ops under a special name."""
import math

import numpy as np
import pytest

import ember_tensor as torch
from cuda_guard import DEVICES

mpmath = pytest.importorskip("mpmath")
mp = mpmath.mp


@pytest.fixture(autouse=True)
def _forty_digits():
    # mpmath's precision is global: set it around each test, never at import (collection
    # imports every test module before any runs, and test_special_bessel_polynomials.py
    # wants 30 digits).
    with mp.workdps(40):
        yield


S = torch.special
INF, NAN = math.inf, math.nan


def _ndtri(p):
    # Enough digits that 2p - 1 keeps a tiny p.
    if p == 0:
        return -mpmath.inf
    with mp.workdps(40 + max(0, int(-mpmath.log10(p)))):
        return +(mp.sqrt(2) * mpmath.erfinv(2 * p - 1))


# (name, mpmath reference of one mpf, sample values): references run only on finite
# values inside the domain; the edges are in EDGES.
UNARY = [
    ("i0", lambda x: mpmath.besseli(0, x), [0.0, 1e-8, 0.3, -1.5, 4.0, 12.0, -29.5, 30.5, 80.0, 700.0]),
    ("i0e", lambda x: mpmath.besseli(0, x) * mpmath.exp(-abs(x)),
     [0.0, 1e-8, 0.3, -1.5, 4.0, 12.0, -29.5, 30.5, 80.0, 1e4, -1e8]),
    ("i1", lambda x: mpmath.besseli(1, x), [0.0, 1e-8, 0.3, -1.5, 4.0, 12.0, -29.5, 30.5, 80.0, -700.0]),
    ("i1e", lambda x: mpmath.besseli(1, x) * mpmath.exp(-abs(x)),
     [0.0, 1e-8, 0.3, -1.5, 4.0, 12.0, -29.5, 30.5, 80.0, 1e4, -1e8]),
    ("erfcx", lambda x: mpmath.erfc(x) * mpmath.exp(x * x),
     [0.0, 1e-8, -0.5, 1.0, 3.99, 4.0, 10.0, 30.0, 1e10, -5.0, -26.0]),
    ("ndtr", mpmath.ncdf, [0.0, 0.5, -1.0, 3.0, -10.0, -37.0, 8.0]),
    ("ndtri", _ndtri, [0.5, 0.3, 0.02, 0.025, 0.9, 0.999, 1e-10, 1e-300, 1 - 1e-12]),
    ("log_ndtr", lambda x: mpmath.log(mpmath.ncdf(x)), [0.0, 2.0, 9.0, -1.0, -5.0, -19.9, -20.1, -40.0, -1e5]),
    ("sinc", lambda x: mpmath.sincpi(x), [1e-9, 0.25, -0.5, 1.5, 2.75, -7.125]),
    ("entr", lambda x: -x * mpmath.log(x), [1e-30, 0.25, 1.0, 3.0, 1e20]),
]
# sin(pi x) near a root magnifies the input's rounding; log1p(-tiny) in float32 math.
_FLOAT32_RTOL = {"sinc": 1e-4, "log_ndtr": 1e-5}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("name, reference, values", UNARY, ids=[case[0] for case in UNARY])
def test_unary_against_mpmath(name, reference, values, dtype, device):
    x = torch.tensor(values, dtype=dtype, device=device)
    np_dtype = np.float64 if dtype is torch.float64 else np.float32
    inputs = np.array(values, dtype=np_dtype)  # the values the kernel sees, rounded to dtype
    expected = np.array([float(reference(mp.mpf(float(v)))) for v in inputs]).astype(np_dtype)
    got = getattr(S, name)(x)
    assert got.dtype is dtype and got.device.type == device
    rtol = 1e-13 if dtype is torch.float64 else _FLOAT32_RTOL.get(name, 2e-6)
    np.testing.assert_allclose(np.array(got.cpu().tolist()), expected, rtol=rtol, atol=0)


# (name, [(input, PyTorch's value), ...])
EDGES = [
    ("i0", [(INF, NAN), (-INF, NAN), (NAN, NAN), (-0.0, 1.0), (1000.0, INF)]),
    ("i0e", [(INF, 0.0), (-INF, 0.0), (NAN, NAN), (0.0, 1.0)]),
    ("i1", [(INF, NAN), (NAN, NAN), (0.0, 0.0), (1000.0, INF), (-1000.0, -INF)]),
    ("i1e", [(INF, 0.0), (-INF, -0.0), (NAN, NAN), (0.0, 0.0)]),
    ("erfcx", [(INF, 0.0), (-INF, INF), (NAN, NAN), (-27.0, INF), (0.0, 1.0)]),
    ("ndtr", [(INF, 1.0), (-INF, 0.0), (NAN, NAN), (0.0, 0.5)]),
    ("ndtri", [(0.0, -INF), (1.0, INF), (0.5, 0.0), (-0.1, NAN), (1.1, NAN), (NAN, NAN)]),
    ("log_ndtr", [(INF, 0.0), (-INF, -INF), (NAN, NAN), (0.0, -math.log(2.0))]),
    ("sinc", [(0.0, 1.0), (INF, NAN), (-INF, NAN), (NAN, NAN), (1.0, math.sin(math.pi) / math.pi)]),
    ("entr", [(0.0, 0.0), (-1.0, -INF), (INF, -INF), (-INF, -INF), (NAN, NAN), (1.0, -0.0)]),
    ("expit", [(INF, 1.0), (-INF, 0.0), (0.0, 0.5)]),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name, cases", EDGES, ids=[case[0] for case in EDGES])
def test_edge_values(name, cases, device):
    x = torch.tensor([c[0] for c in cases], dtype=torch.float64, device=device)
    got = getattr(S, name)(x).cpu().tolist()
    np.testing.assert_array_equal(np.array(got), np.array([c[1] for c in cases]))


def _grid(a_values, x_values):
    a, x = np.meshgrid(a_values, x_values)
    return a.ravel().tolist(), x.ravel().tolist()


BINARY = [
    ("gammainc", lambda a, x: mpmath.gammainc(a, 0, x, regularized=True),
     _grid([0.25, 1.0, 2.5, 7.0, 30.0, 150.0], [1e-3, 0.5, 2.0, 8.0, 29.0, 31.0, 140.0]), 1e-12),
    ("gammaincc", lambda a, x: mpmath.gammainc(a, x, mpmath.inf, regularized=True),
     _grid([0.25, 1.0, 2.5, 7.0, 30.0, 150.0], [1e-3, 0.5, 2.0, 8.0, 29.0, 31.0, 140.0]), 1e-12),
    ("zeta", lambda s, q: mpmath.zeta(s, q),
     _grid([1.5, 2.0, 3.0, 7.5, 16.0], [0.25, 1.0, 3.0, 12.0, 150.0]), 1e-13),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name, reference, grid, rtol", BINARY, ids=[case[0] for case in BINARY])
def test_binary_against_mpmath(name, reference, grid, rtol, device):
    a, x = grid
    expected = [float(reference(mp.mpf(p), mp.mpf(q))) for p, q in zip(a, x)]
    got = getattr(S, name)(torch.tensor(a, dtype=torch.float64, device=device),
                           torch.tensor(x, dtype=torch.float64, device=device))
    np.testing.assert_allclose(np.array(got.cpu().tolist()), expected, rtol=rtol, atol=1e-300)


@pytest.mark.parametrize("device", DEVICES)
def test_binary_edge_values(device):
    def values(fn, a, x):
        return fn(torch.tensor(a, device=device, dtype=torch.float64),
                  torch.tensor(x, device=device, dtype=torch.float64)).cpu().tolist()
    a = [-1.0, 1.0, 0.0, 0.0, 2.0, INF, INF, 2.0, NAN]
    x = [1.0, -1.0, 1.0, 0.0, 0.0, 1.0, INF, INF, 1.0]
    np.testing.assert_array_equal(values(S.gammainc, a, x), [NAN, NAN, 1.0, NAN, 0.0, 0.0, NAN, 1.0, NAN])
    np.testing.assert_array_equal(values(S.gammaincc, a, x), [NAN, NAN, 0.0, NAN, 1.0, 1.0, NAN, 0.0, NAN])
    # zeta: a pole at s = 1, NaN below, inf at the poles q = 0, -1, ...; NaN for a
    # negative q with a non-integer s.
    s = [1.0, 0.5, 2.0, 2.0, 2.5, NAN]
    q = [2.0, 2.0, 0.0, -3.0, -0.5, 1.0]
    np.testing.assert_array_equal(values(S.zeta, s, q), [INF, NAN, INF, INF, NAN, NAN])


@pytest.mark.parametrize("device", DEVICES)
def test_polygamma_and_multigammaln(device):
    x = torch.tensor([0.3, 1.0, 2.5, -0.5, 10.0], dtype=torch.float64, device=device)
    for n in range(5):
        expected = [float(mpmath.re(mpmath.polygamma(n, v))) for v in x.cpu().tolist()]
        rtol = 1e-10 if n == 0 else 1e-13  # digamma is ember's existing kernel
        np.testing.assert_allclose(S.polygamma(n, x).cpu().tolist(), expected, rtol=rtol)
    assert S.polygamma(1, x).tolist() == torch.polygamma(1, x).tolist() == x.polygamma(1).tolist()
    y = torch.tensor([1.25, 2.0, 7.5], dtype=torch.float64, device=device)
    for p in (1, 2, 4):
        expected = [float(p * (p - 1) / 4 * mpmath.log(mpmath.pi)
                          + sum(mpmath.log(abs(mpmath.gamma(v - mp.mpf(j) / 2))) for j in range(p))) for v in y.cpu().tolist()]
        np.testing.assert_allclose(S.multigammaln(y, p).cpu().tolist(), expected, rtol=1e-13)
    with pytest.raises(RuntimeError, match="does not support negative n"):
        S.polygamma(-1, x)
    with pytest.raises(RuntimeError, match="p has to be greater than or equal to 1"):
        S.multigammaln(y, 0)


def test_xlog1py():
    x = torch.tensor([0.0, 0.0, 2.0, 1.0, 0.0])
    y = torch.tensor([-1.0, NAN, -1.0, 3.0, -2.0])
    np.testing.assert_array_equal(S.xlog1py(x, y).tolist(), [0.0, NAN, -INF, np.float32(math.log(4.0)), 0.0])
    assert S.xlog1py(torch.tensor([1, 2]), 1).dtype is torch.float32
    assert S.xlog1py(2.0, torch.tensor([0.5], dtype=torch.float64)).tolist() == [2 * math.log1p(0.5)]


INTEGER_INPUT = ["i0", "i0e", "i1", "i1e", "erfcx", "ndtr", "ndtri", "log_ndtr", "sinc", "entr", "expit", "erf",
                 "erfc", "erfinv", "gammaln", "digamma", "psi", "log1p", "expm1", "exp2"]


@pytest.mark.parametrize("name", INTEGER_INPUT)
def test_integer_inputs_compute_in_the_default_float_dtype(name):
    fn = getattr(S, name)
    got = fn(torch.tensor([0, 1, 2]))
    assert got.dtype is torch.float32
    np.testing.assert_array_equal(got.tolist(), fn(torch.tensor([0.0, 1.0, 2.0])).tolist())
    torch.set_default_dtype(torch.float64)
    try:
        assert fn(torch.tensor([True, False])).dtype is torch.float64
    finally:
        torch.set_default_dtype(torch.float32)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", ["i0", "i0e", "i1", "i1e", "erfcx", "ndtr", "ndtri", "log_ndtr", "sinc", "entr"])
def test_out_zero_dim_and_non_contiguous(name, device):
    fn = getattr(S, name)
    base = torch.tensor([[0.1, 0.2, 0.3], [0.4, 0.6, 0.9]], dtype=torch.float64, device=device)
    t = base.t()  # non-contiguous
    assert not t.is_contiguous()
    assert fn(t).cpu().tolist() == fn(t.contiguous()).cpu().tolist()
    scalar = fn(torch.tensor(0.3, dtype=torch.float64, device=device))
    assert scalar.dim() == 0 and scalar.item() == fn(base)[0, 2].item()
    out = torch.empty(3, 2, dtype=torch.float64, device=device)
    assert fn(t, out=out) is out and out.cpu().tolist() == fn(t).cpu().tolist()


def test_binary_ops_take_out_numbers_and_promote():
    a, x = torch.tensor([1.0, 2.0]), torch.tensor([0.5, 3.0])
    out = torch.empty(2)
    assert S.gammainc(a, x, out=out) is out and out.tolist() == S.gammainc(a, x).tolist()
    assert S.gammaincc(torch.tensor([1, 2]), torch.tensor([1, 2])).dtype is torch.float32
    assert S.zeta(2.0, torch.tensor([1.0, 2.0])).tolist() == S.zeta(torch.tensor([2.0, 2.0]), torch.tensor([1.0, 2.0])).tolist()
    assert S.zeta(torch.tensor([2, 3]), 1).dtype is torch.float32
    assert torch.igamma(a, x).tolist() == a.igamma(x).tolist() == S.gammainc(a, x).tolist()
    assert torch.igammac(a, x).tolist() == a.igammac(x).tolist() == S.gammaincc(a, x).tolist()


def test_inplace_forms():
    for name, args, reference in (("i0_", (), S.i0), ("sinc_", (), S.sinc),
                                  ("polygamma_", (2,), lambda t: S.polygamma(2, t)),
                                  ("mvlgamma_", (2,), lambda t: S.multigammaln(t, 2))):
        x = torch.tensor([1.5, 2.5])
        assert getattr(x, name)(*args) is x and x.tolist() == reference(torch.tensor([1.5, 2.5])).tolist()
    y = torch.tensor([1.0, 2.0])
    assert y.igamma_(torch.tensor([1.0, 1.0])) is y and y.tolist() == S.gammainc(
        torch.tensor([1.0, 2.0]), torch.tensor([1.0, 1.0])).tolist()


def test_existing_ops_under_special_names():
    x = torch.tensor([[0.25, 0.5, 2.0], [1.5, -0.5, 3.0]])
    same = [(S.expit, torch.sigmoid), (S.gammaln, torch.lgamma), (S.psi, torch.digamma), (S.digamma, torch.digamma),
            (S.erf, torch.erf), (S.erfc, torch.erfc), (S.log1p, torch.log1p), (S.expm1, torch.expm1),
            (S.exp2, torch.exp2), (S.round, torch.round), (S.i0, torch.i0), (S.sinc, torch.sinc)]
    for special, plain in same:
        assert special(x).tolist() == plain(x).tolist()
    p = torch.tensor([0.1, 0.5, 0.9])
    assert S.logit(p).tolist() == torch.logit(p).tolist() and S.logit(p, eps=0.2).tolist() == torch.logit(p, 0.2).tolist()
    assert S.erfinv(p).tolist() == torch.erfinv(p).tolist()
    assert S.xlogy(p, 2.0).tolist() == torch.xlogy(p, 2.0).tolist()
    assert S.round(torch.tensor([1.2345]), decimals=2).tolist() == torch.round(torch.tensor([1.2345]), decimals=2).tolist()
    assert S.logsumexp(x, 1).tolist() == torch.logsumexp(x, 1).tolist()
    assert S.logsumexp(x, (0, 1), keepdim=True).shape == (1, 1)
    assert S.softmax(x, 1).tolist() == torch.softmax(x, 1).tolist()
    assert S.log_softmax(x, 0, dtype=torch.float64).dtype is torch.float64
    out = torch.empty(2, 3)
    assert S.ndtr(x, out=out) is out and S.erfcx(x, out=torch.empty(2, 3)).shape == (2, 3)
