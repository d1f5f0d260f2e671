"""torch.special's Bessel functions, airy_ai and orthogonal polynomials (issue 27): against
mpmath at 30 digits at known points, against PyTorch (test-only) over random inputs with
the edge values (0, -0, negatives, +-inf, NaN, huge), float32 and float64, on the CPU and
on CUDA (Numba's simulator in CI); dtypes, errors, out=, Python numbers for n, and no
gradient (PyTorch records none for these)."""
import math

import numpy as np
import pytest

import ember_tensor as torch
from cuda_guard import DEVICES

mpmath = pytest.importorskip("mpmath")


@pytest.fixture(autouse=True)
def _thirty_digits():
    # mpmath's precision is global: set it around each test, never at import (collection
    # imports every test module before any runs, and another module wants its own).
    with mpmath.workdps(30):
        yield


S = torch.special
INF, NAN = math.inf, math.nan

# (name, mpmath reference, points): the references are exact to 30 digits.
BESSEL = [
    ("bessel_j0", lambda x: mpmath.besselj(0, x), [1e-10, 0.5, -1.9, 2.0, 2.4048255576957727, 7.3, -13.1, 24.9, 25.1, 80.5, 1e4]),
    ("bessel_j1", lambda x: mpmath.besselj(1, x), [1e-10, 0.5, -1.9, 2.0, 3.8317059702075125, 7.3, -13.1, 24.9, 25.1, 80.5, 1e4]),
    ("bessel_y0", lambda x: mpmath.bessely(0, x), [1e-300, 1e-10, 0.5, 1.9, 2.0, 7.3, 13.1, 24.9, 25.1, 80.5, 1e4]),
    ("bessel_y1", lambda x: mpmath.bessely(1, x), [1e-10, 0.5, 1.9, 2.0, 7.3, 13.1, 24.9, 25.1, 80.5, 1e4]),
    ("modified_bessel_i0", lambda x: mpmath.besseli(0, x), [0.0, 0.5, -3.0, 31.0, 700.0]),
    ("modified_bessel_i1", lambda x: mpmath.besseli(1, x), [0.0, 0.5, -3.0, 31.0, 700.0]),
    ("modified_bessel_k0", lambda x: mpmath.besselk(0, x), [1e-300, 1e-8, 0.5, 1.99, 2.0, 2.01, 9.0, 60.0, 700.0]),
    ("modified_bessel_k1", lambda x: mpmath.besselk(1, x), [1e-300, 1e-8, 0.5, 1.99, 2.0, 2.01, 9.0, 60.0, 700.0]),
    ("scaled_modified_bessel_k0", lambda x: mpmath.besselk(0, x) * mpmath.exp(x), [1e-8, 0.5, 2.0, 9.0, 1e3, 1e8]),
    ("scaled_modified_bessel_k1", lambda x: mpmath.besselk(1, x) * mpmath.exp(x), [1e-8, 0.5, 2.0, 9.0, 1e3, 1e8]),
    ("spherical_bessel_j0", lambda x: mpmath.sin(x) / x, [1e-10, 0.3, -0.49, 0.5, 4.0, -100.25]),
    ("airy_ai", mpmath.airyai, [0.0, 0.5, 1.0, 1.01, 5.0, 50.0, 100.0, -1.0, -5.0, -7.4, -7.6, -30.0, -1e4]),
]


def _amplitude(name, x):
    # The oscillating functions are accurate relative to their envelope, not near zeros.
    if x == 0.0:
        return 0.0
    if name in ("bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1"):
        return min(1.0, math.sqrt(2 / (math.pi * abs(x))))
    if name == "airy_ai" and x < 0:
        return min(0.5, abs(x) ** -0.25 / math.sqrt(math.pi))
    return 0.0


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("name, reference, points", BESSEL, ids=[case[0] for case in BESSEL])
def test_bessel_against_mpmath(name, reference, points, dtype, device):
    np_dtype = np.float64 if dtype is torch.float64 else np.float32
    inputs = np.array(points, dtype=np_dtype)
    got = getattr(S, name)(torch.tensor(inputs, device=device))
    assert got.dtype is dtype and got.device.type == device
    expected = [float(reference(mpmath.mpf(float(v)))) for v in inputs]
    # airy_ai's Maclaurin series keeps about 11 digits near -7.5 (see scalar_bessel.py).
    rtol = (1e-10 if name == "airy_ai" else 1e-13) if dtype is torch.float64 else 2e-6
    for x, g, e in zip(inputs.tolist(), got.cpu().tolist(), expected):
        e32 = float(np_dtype(e))  # float32: the reference rounded as the result is
        assert abs(g - e32) <= rtol * max(abs(e), _amplitude(name, x)) or (g == e32), (x, g, e)


# Each function at the edges, PyTorch's values (checked against torch below as well).
EDGES = {
    "bessel_j0": [(0.0, 1.0), (-0.0, 1.0), (INF, NAN), (-INF, NAN), (NAN, NAN)],
    "bessel_j1": [(0.0, 0.0), (INF, NAN), (NAN, NAN)],
    "bessel_y0": [(0.0, -INF), (-0.0, -INF), (-1.0, NAN), (INF, NAN), (NAN, NAN)],
    "bessel_y1": [(0.0, -INF), (-1.0, NAN), (INF, NAN)],
    "modified_bessel_i0": [(INF, NAN), (1e300, INF), (NAN, NAN)],
    "modified_bessel_k0": [(0.0, INF), (-1.0, NAN), (INF, 0.0), (-INF, NAN), (1e300, 0.0)],
    "modified_bessel_k1": [(0.0, INF), (-1.0, NAN), (INF, 0.0)],
    "scaled_modified_bessel_k0": [(0.0, INF), (-1.0, NAN), (INF, 0.0)],
    "scaled_modified_bessel_k1": [(0.0, INF), (INF, 0.0), (NAN, NAN)],
    "spherical_bessel_j0": [(0.0, 1.0), (INF, 0.0), (-INF, 0.0), (NAN, NAN)],
    "airy_ai": [(INF, NAN), (-INF, NAN), (1e300, 0.0), (-1e300, NAN), (NAN, NAN)],
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(EDGES))
def test_bessel_edge_values(name, device):
    inputs, expected = zip(*EDGES[name])
    got = getattr(S, name)(torch.tensor(inputs, dtype=torch.float64, device=device)).cpu().tolist()
    np.testing.assert_array_equal(got, expected)


POLYNOMIALS = {
    "chebyshev_polynomial_t": lambda x, n: mpmath.chebyt(n, x),
    "chebyshev_polynomial_u": lambda x, n: mpmath.chebyu(n, x),
    # V_n and W_n from U: V_n = U_n - U_{n-1}, W_n = U_n + U_{n-1} (U_{-1} = 0).
    "chebyshev_polynomial_v": lambda x, n: mpmath.chebyu(n, x) - (mpmath.chebyu(n - 1, x) if n else 0),
    "chebyshev_polynomial_w": lambda x, n: mpmath.chebyu(n, x) + (mpmath.chebyu(n - 1, x) if n else 0),
    "shifted_chebyshev_polynomial_t": lambda x, n: mpmath.chebyt(n, 2 * x - 1),
    "shifted_chebyshev_polynomial_u": lambda x, n: mpmath.chebyu(n, 2 * x - 1),
    "shifted_chebyshev_polynomial_v": lambda x, n: mpmath.chebyu(n, 2 * x - 1) - (mpmath.chebyu(n - 1, 2 * x - 1) if n else 0),
    "shifted_chebyshev_polynomial_w": lambda x, n: mpmath.chebyu(n, 2 * x - 1) + (mpmath.chebyu(n - 1, 2 * x - 1) if n else 0),
    "hermite_polynomial_h": lambda x, n: mpmath.hermite(n, x),
    "hermite_polynomial_he": lambda x, n: mpmath.hermite(n, x / mpmath.sqrt(2)) * mpmath.mpf(2) ** (-mpmath.mpf(n) / 2),
    "laguerre_polynomial_l": lambda x, n: sum(mpmath.binomial(n, k) * (-x) ** k / mpmath.factorial(k) for k in range(n + 1)),
    "legendre_polynomial_p": lambda x, n: mpmath.legendre(n, x),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(POLYNOMIALS))
def test_polynomials_against_mpmath(name, device):
    xs = [-1.0, -0.7, 0.0, 0.3, 0.9, 1.0, 1.6]
    ns = [0, 1, 2, 5, 9, 12]
    x = torch.tensor([[v] * len(ns) for v in xs], dtype=torch.float64, device=device)
    n = torch.tensor(ns, device=device)  # int64 n broadcast against float64 x
    got = getattr(S, name)(x, n)
    assert got.dtype is torch.float64 and got.shape == (len(xs), len(ns))
    for row, v in zip(got.cpu().tolist(), xs):
        for g, k in zip(row, ns):
            e = float(POLYNOMIALS[name](mpmath.mpf(v), k))
            assert abs(g - e) <= 1e-12 * max(1.0, abs(e)), (v, k, g, e)


UNARY_NAMES = sorted(name for name, _, _ in BESSEL)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_bessel_against_pytorch(dtype, device):
    ptorch = pytest.importorskip("torch")
    rng = np.random.default_rng(27)
    edges = [0.0, -0.0, -1.0, 1.0, INF, -INF, NAN, 1e-300, 1e300, -1e300, 2.0, 25.0, -25.0, 104.0, 106.0]
    values = np.concatenate([edges, rng.uniform(-30, 30, 40), rng.standard_normal(10) * 300]).astype(dtype)
    for name in UNARY_NAMES:
        expected = getattr(ptorch.special, name)(ptorch.tensor(values)).numpy()
        got = np.array(getattr(S, name)(torch.tensor(values, device=device)).cpu().tolist(), dtype=dtype)
        # PyTorch's float64 J, Y and Ai keep only 5 to 7 digits between 2 and 25 (ember's
        # match mpmath to 1e-15: test_bessel_against_mpmath), and in float32 PyTorch
        # computes the phase of the oscillating ones in float32 (an error growing with
        # |x|, |x|^1.5 for Ai), so compare at PyTorch's accuracy.
        tolerance = 3e-5 if dtype == "float64" else 5e-5
        if dtype == "float32" and name in ("bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "airy_ai"):
            growth = np.abs(values) ** (1.5 if name == "airy_ai" else 1.0)
            tolerance = tolerance * np.maximum(1.0, np.nan_to_num(growth, posinf=1.0))
        scale = np.maximum(np.abs(expected), 0.05)
        same = (got == expected) | (np.isnan(got) & np.isnan(expected)) | (np.abs(got - expected) <= tolerance * scale)
        assert same.all(), (name, values[~same], got[~same], expected[~same])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_polynomials_against_pytorch(dtype, device):
    ptorch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    xs = np.concatenate([[0.0, 1.0, -1.0, 0.5, 2.0, INF, -INF], rng.uniform(-1.5, 1.5, 12)])
    # n: truncated toward 0; negative, NaN and out of int64's range give 0 (C's cast).
    ns = np.array([-3.0, -1.0, -0.5, 0.0, 1.0, 2.0, 2.7, 3.0, 7.0, 9.0, 13.0, NAN, INF, 1e20])
    x, n = (a.astype(dtype) for a in np.meshgrid(xs, ns))
    for name in POLYNOMIALS:
        expected = getattr(ptorch.special, name)(ptorch.tensor(x), ptorch.tensor(n)).numpy()
        got = np.array(getattr(S, name)(torch.tensor(x, device=device), torch.tensor(n, device=device)).cpu().tolist(),
                       dtype=dtype)
        tolerance = 1e-10 if dtype == "float64" else 1e-4
        with np.errstate(invalid="ignore"):
            same = ((got == expected) | (np.isnan(got) & np.isnan(expected))
                    | (np.abs(got - expected) <= tolerance * np.maximum(np.abs(expected), 1.0)))
        assert same.all(), (name, x[~same], n[~same], got[~same], expected[~same])


def test_dtypes_numbers_and_errors():
    x = torch.tensor([0.5, 1.5])
    assert S.bessel_j0(torch.tensor([1, 2])).dtype is torch.float32
    assert S.bessel_j0(torch.tensor([True])).dtype is torch.float32
    assert S.chebyshev_polynomial_t(torch.tensor([1, 2]), 3).dtype is torch.float32
    assert S.chebyshev_polynomial_t(x.double(), torch.tensor([3.7])).dtype is torch.float64
    # A Python number for n or for x (not both, as in PyTorch's schema).
    assert S.hermite_polynomial_h(x, 3).tolist() == S.hermite_polynomial_h(x, torch.tensor(3)).tolist()
    assert S.legendre_polynomial_p(0.5, torch.tensor([2, 3])).tolist() == S.legendre_polynomial_p(
        torch.tensor([0.5, 0.5]), torch.tensor([2, 3])).tolist()
    with pytest.raises(TypeError, match="received an invalid combination of arguments"):
        S.chebyshev_polynomial_t(0.5, 2)
    for dtype, label in ((torch.float16, "Half"), (torch.bfloat16, "BFloat16"), (torch.complex64, "ComplexFloat")):
        with pytest.raises(NotImplementedError, match=f'"bessel_j0_cpu" not implemented for \'{label}\''):
            S.bessel_j0(torch.ones(2, dtype=dtype))
        with pytest.raises(NotImplementedError, match=f'"modified_bessel_i0_cpu" not implemented for \'{label}\''):
            S.modified_bessel_i0(torch.ones(2, dtype=dtype))
        with pytest.raises(NotImplementedError, match=f'"laguerre_polynomial_l_cpu" not implemented for \'{label}\''):
            S.laguerre_polynomial_l(torch.ones(2, dtype=dtype), 2)


@pytest.mark.parametrize("device", DEVICES)
def test_out_zero_dim_and_non_contiguous(device):
    base = torch.tensor([[0.1, 2.2, 3.3], [4.4, 0.6, 9.9]], dtype=torch.float64, device=device)
    t = base.t()
    assert not t.is_contiguous()
    for fn in (S.bessel_y1, S.modified_bessel_k0, S.airy_ai):
        assert fn(t).cpu().tolist() == fn(t.contiguous()).cpu().tolist()
        assert fn(torch.tensor(2.2, dtype=torch.float64, device=device)).item() == fn(base)[0, 1].item()
        out = torch.empty(3, 2, dtype=torch.float64, device=device)
        assert fn(t, out=out) is out and out.cpu().tolist() == fn(t).cpu().tolist()
    n = torch.tensor([[2], [5]], device=device)
    assert S.chebyshev_polynomial_u(t, n.t()).cpu().tolist() == S.chebyshev_polynomial_u(t.contiguous(), n.t()).cpu().tolist()


def test_no_gradient_as_in_pytorch():
    autograd = pytest.importorskip("ember_autograd")
    assert autograd  # registers the derivative table
    x = torch.tensor([0.5, 1.5], dtype=torch.float64, requires_grad=True)
    for name in UNARY_NAMES:
        y = getattr(S, name)(x)
        assert not y.requires_grad and y.grad_fn is None
        with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad"):
            y.sum().backward()
    assert not S.chebyshev_polynomial_t(x, 3).requires_grad
