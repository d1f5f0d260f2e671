"""NumPy references for the op database's ``torch.special`` entries, float64, written with
the math module (scipy.special where installed): series and bisections that are slow but
share nothing with ember's kernels. Each is accurate over the domain its entry draws from
and at the edge values (0, +-inf, NaN)."""
import math

import numpy as np

from .refs import _special, _vectorized

__all__ = ["_ref_i0", "_ref_i0e", "_ref_i1", "_ref_i1e", "_ref_erfcx", "_ref_ndtr", "_ref_ndtri", "_ref_log_ndtr",
           "_ref_sinc", "_ref_entr", "_ref_igamma", "_ref_igammac", "_ref_zeta", "_ref_xlog1py"]


def _bessel_i_series(x, order):
    # sum_k (x/2)^(2k + order) / (k! (k + order)!): positive terms for either sign of x^2.
    y = 0.25 * x * x
    terms = [1.0]
    for k in range(1, 400):
        terms.append(terms[-1] * y / (k * (k + order)))
        if terms[-1] < 1e-18 * terms[0]:
            break
    return math.fsum(terms) * (0.5 * x if order else 1.0)


def _bessel_i(order, scaled):
    def f(x):
        if math.isnan(x):
            return x
        if math.isinf(x):
            return (0.0 * x if order else 0.0) if scaled else math.nan  # PyTorch: NaN at +-inf unscaled
        value = _bessel_i_series(x, order)
        return value * math.exp(-abs(x)) if scaled else value
    return _vectorized(f)


def _erfcx_scalar(x):
    return math.exp(x * x) * math.erfc(x) if x < 25 else 1 / (math.sqrt(math.pi) * x) * (1 - 0.5 / (x * x))


def _ndtri_scalar(p):
    # Bisection on 0.5 erfc(-x / sqrt(2)) (exact in the lower tail).
    if math.isnan(p) or not 0 <= p <= 1:
        return math.nan
    if p in (0.0, 1.0):
        return math.copysign(math.inf, p - 0.5)
    lo, hi = -40.0, 40.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if 0.5 * math.erfc(-mid / math.sqrt(2)) < p else (lo, mid)
    return (lo + hi) / 2


def _log_ndtr_scalar(x):
    if x > 0:
        return math.log1p(-0.5 * math.erfc(x / math.sqrt(2)))
    cdf = 0.5 * math.erfc(-x / math.sqrt(2))
    return math.log(cdf) if cdf > 0 else -math.inf


def _igamma_scalar(a, x):
    # P(a, x) = x^a e^-x / Gamma(a + 1) sum_n x^n / ((a + 1) ... (a + n)), for the entries' small x.
    if math.isnan(a) or math.isnan(x) or a < 0 or x < 0 or (a == 0 and x == 0) or (math.isinf(a) and math.isinf(x)):
        return math.nan
    if a == 0 or math.isinf(x):
        return 1.0
    if x == 0 or math.isinf(a):
        return 0.0
    terms, term = [1.0], 1.0
    for n in range(1, 2000):
        term *= x / (a + n)
        terms.append(term)
        if term < 1e-18:
            break
    return math.exp(a * math.log(x) - x - math.lgamma(a + 1)) * math.fsum(terms)


def _igammac_scalar(a, x):
    lower = _igamma_scalar(a, x)
    return lower if math.isnan(lower) else 1.0 - lower


def _zeta_scalar(s, q):
    # The first 1000 terms, then Euler-Maclaurin's integral and first two corrections.
    if math.isnan(s) or math.isnan(q) or s < 1:
        return math.nan
    if s == 1 or (q <= 0 and q == math.floor(q)):
        return math.inf
    if q <= 0 and s != math.floor(s):
        return math.nan
    if math.isinf(s) or math.isinf(q):
        return float(np.power(q, -s))
    n = 1000
    tail = n + q
    return math.fsum([(k + q) ** -s for k in range(n)] + [tail ** (1 - s) / (s - 1), 0.5 * tail ** -s,
                                                          s * tail ** (-s - 1) / 12])


def _ref_sinc(x):
    with np.errstate(all="ignore"):
        return np.where(x == 0, 1.0, np.sin(np.pi * x) / (np.pi * x))


def _ref_entr(x):
    with np.errstate(all="ignore"):
        return np.where(x > 0, -x * np.log(np.where(x > 0, x, 1.0)), np.where(x == 0, 0.0, np.where(np.isnan(x), x, -np.inf)))


def _ref_ndtr(x):
    return _vectorized(lambda v: 0.5 * math.erfc(-v / math.sqrt(2)))(x)


def _ref_xlog1py(x, y):
    """x * log1p(y), 0 where x == 0 unless y is NaN (scipy.special.xlog1py's contract)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.where(x == 0, 0.0, x * np.log1p(y))
    return np.where(np.isnan(y), y, value)


_ref_i0, _ref_i0e, _ref_i1, _ref_i1e = _bessel_i(0, False), _bessel_i(0, True), _bessel_i(1, False), _bessel_i(1, True)
_ref_erfcx, _ref_ndtri = _vectorized(_erfcx_scalar), _vectorized(_ndtri_scalar)
_ref_log_ndtr = _vectorized(_log_ndtr_scalar)
_ref_igamma, _ref_igammac, _ref_zeta = _vectorized(_igamma_scalar), _vectorized(_igammac_scalar), _vectorized(_zeta_scalar)
if _special is not None:  # pragma: no cover - depends on the environment
    _ref_erfcx, _ref_ndtri, _ref_log_ndtr = _special.erfcx, _special.ndtri, _special.log_ndtr
