"""NumPy references for the op database's elementwise entries (float64 or exact integers)."""
import math

import ml_dtypes
import numpy as np

from .core import (
    BF16, F16, F32, F64, NP,
)

__all__ = [
    "_vectorized", "_lgamma_scalar", "_erfinv_scalar", "_digamma_scalar", "_erf", "_erfc", "_erfinv", "_digamma",
    "_lgamma", "_ref_sign", "_ref_sgn", "_ref_round", "_ref_logit", "_FLOAT_MAX", "_ref_nan_to_num", "_ref_add", "_ref_sub",
    "_ref_div", "_ref_pow", "_ref_lshift", "_ref_rshift", "_ref_clamp", "_ref_lerp", "_ref_addcmul",
    "_ref_addcdiv", "_ref_isclose", "_ref_allclose", "_ref_equal", "_ref_logaddexp", "_ref_xlogy", "_ref_float_power",
    "_ref_heaviside"
]

try:  # scipy is only a better reference for the special functions; math does without it
    from scipy import special as _special
except ImportError:  # pragma: no cover - depends on the environment
    _special = None


def _vectorized(f):
    return np.vectorize(f, otypes=[np.float64])


def _lgamma_scalar(x):
    try:
        return math.lgamma(x)
    except ValueError:  # poles: 0 and the negative integers
        return math.inf


def _erfinv_scalar(y):
    # Bisection on math.erf: slow but independent of any erfinv implementation.
    if math.isnan(y) or abs(y) > 1:
        return math.nan
    if abs(y) == 1:
        return math.copysign(math.inf, y)
    lo, hi = -6.0, 6.0
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if math.erf(mid) < y else (lo, mid)
    return (lo + hi) / 2


def _digamma_scalar(x):
    # Central difference of lgamma (error ~1e-9), or the reflection formula below 0.5.
    if math.isnan(x) or x == -math.inf:
        return math.nan
    if x == math.inf:
        return math.inf
    if x == 0:
        return -math.copysign(math.inf, x) if math.copysign(1, x) > 0 else math.inf
    if x < 0 and x == math.floor(x):
        return math.nan
    if x < 0.5:
        return _digamma_scalar(1 - x) - math.pi / math.tan(math.pi * x)
    h = 1e-5 * max(1.0, x)
    return (math.lgamma(x + h) - math.lgamma(x - h)) / (2 * h)


if _special is not None:
    _erf, _erfc, _erfinv, _digamma = _special.erf, _special.erfc, _special.erfinv, _special.digamma

    def _lgamma(x):
        # PyTorch (like C's lgamma) has lgamma(-inf) = +inf; scipy's gammaln gives -inf.
        return np.where(x == -np.inf, np.inf, _special.gammaln(x))
else:  # pragma: no cover - exercised where scipy is missing
    _erf, _erfc = _vectorized(math.erf), _vectorized(math.erfc)
    _erfinv, _digamma, _lgamma = (_vectorized(_erfinv_scalar), _vectorized(_digamma_scalar),
                                  _vectorized(_lgamma_scalar))


def _ref_sign(x):
    if x.dtype == np.bool_:
        return x
    return np.where(np.isnan(x), 0, np.sign(x)) if x.dtype.kind == "f" else np.sign(x)


def _ref_sgn(x):
    """z / |z| for complex numbers (0 at 0, NaN parts where |z| is), sign for the others."""
    if x.dtype.kind != "c":
        return _ref_sign(x)
    r = np.abs(x)
    with np.errstate(all="ignore"):
        return np.where(r == 0, 0, x / r)


def _ref_round(x, decimals=0):
    return np.round(x, decimals)


def _ref_logit(x, eps=None, *, result_dtype):
    if eps is not None:  # PyTorch takes the bounds in the result's dtype (rounded for half types)
        lo = float(NP[result_dtype](eps))
        x = np.clip(x, lo, float(NP[result_dtype](1 - lo)))
    return np.log(x / (1 - x))


_FLOAT_MAX = {F16: 65504.0, BF16: float(ml_dtypes.finfo(ml_dtypes.bfloat16).max),
              F32: float(np.finfo(np.float32).max), F64: float(np.finfo(np.float64).max)}


def _ref_nan_to_num(x, nan=0.0, posinf=None, neginf=None, *, result_dtype):
    if result_dtype.is_complex:  # each part on its own, with the real dtype's bounds
        real = result_dtype.to_real()
        return (_ref_nan_to_num(x.real, nan, posinf, neginf, result_dtype=real)
                + 1j * _ref_nan_to_num(x.imag, nan, posinf, neginf, result_dtype=real))
    if not result_dtype.is_floating_point:
        return x
    big = _FLOAT_MAX[result_dtype]
    x = np.where(np.isnan(x), nan, x)
    x = np.where(x == np.inf, big if posinf is None else posinf, x)
    return np.where(x == -np.inf, -big if neginf is None else neginf, x)


def _ref_add(a, b, alpha=1):
    return a + np.array(alpha).astype(b.dtype) * b if alpha != 1 else a + b


def _ref_sub(a, b, alpha=1):
    return a - np.array(alpha).astype(b.dtype) * b if alpha != 1 else a - b


def _ref_div(a, b, rounding_mode=None):
    if rounding_mode is None:
        return np.true_divide(a, b)
    if rounding_mode == "floor":
        return np.floor_divide(a, b)
    if a.dtype.kind == "f":
        return np.trunc(a / b)
    return np.trunc(a.astype(np.float64) / b).astype(a.dtype)  # small values: exact


def _ref_pow(a, b):
    if a.dtype.kind in "fc":
        return np.power(a, b)
    # Integer powers with a negative exponent: 1 and -1 keep their magnitude, the rest are 0.
    a, b = np.broadcast_arrays(a, b)
    negative = b < 0
    r = np.power(a, np.where(negative, 0, b).astype(b.dtype))
    special = np.where(a == 1, 1, np.where(a == -1, np.where(b % 2 != 0, -1, 1), 0))
    return np.where(negative, special.astype(r.dtype), r)


def _ref_lshift(a, b):
    bits = a.dtype.itemsize * 8
    out_of_range = (b < 0) | (b >= bits)
    r = np.left_shift(a, np.where(out_of_range, 0, b).astype(a.dtype))
    return np.where(out_of_range, 0, r).astype(a.dtype)


def _ref_rshift(a, b):
    signed = a.dtype.kind == "i"
    max_shift = a.dtype.itemsize * 8 - signed
    out_of_range = (b < 0) | (b >= max_shift)
    # Shifting a signed value by too much leaves its sign; an unsigned one becomes 0.
    r = np.right_shift(a, np.where(out_of_range, max_shift if signed else 0, b).astype(a.dtype))
    return r if signed else np.where(out_of_range, 0, r).astype(a.dtype)


def _ref_clamp(x, min=None, max=None):  # noqa: A002 - PyTorch's names
    if min is not None:
        x = np.maximum(x, min)
    if max is not None:
        x = np.minimum(x, max)
    return x


def _ref_lerp(start, end, weight):
    return start + weight * (end - start)


def _ref_addcmul(x, t1, t2, value=1):
    return x + np.array(value).astype(x.dtype) * t1 * t2


def _ref_addcdiv(x, t1, t2, value=1):
    return x + np.array(value).astype(x.dtype) * (t1 / t2)


def _ref_isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    # PyTorch's formula for every dtype (integers too): |a - b| <= atol + |rtol * b|.
    wide = np.complex128 if np.iscomplexobj(a) or np.iscomplexobj(b) else np.float64
    a64, b64 = np.asarray(a, wide), np.asarray(b, wide)
    close = a64 == b64
    err = np.abs(a64 - b64)
    close |= np.isfinite(err) & (err <= atol + np.abs(rtol * b64))
    if equal_nan:
        close |= np.isnan(a64) & np.isnan(b64)
    return close


def _ref_allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(np.all(_ref_isclose(a, b, rtol, atol, equal_nan)))


def _ref_equal(a, b):
    wide = np.complex128 if np.iscomplexobj(a) or np.iscomplexobj(b) else np.float64
    return a.shape == b.shape and bool(np.all(np.asarray(a, wide) == np.asarray(b, wide)))


def _ref_logaddexp(a, b):
    """NumPy's logaddexp; for complex operands PyTorch's formula, max + log1p(exp(min - max))
    with the operands ordered by real part (its imaginary part is not wrapped to (-pi, pi])."""
    if not (np.iscomplexobj(a) or np.iscomplexobj(b)):
        return np.logaddexp(a, b)
    a, b = np.broadcast_arrays(np.asarray(a, np.complex128), np.asarray(b, np.complex128))
    low, high = np.where(a.real < b.real, a, b), np.where(a.real < b.real, b, a)
    return high + np.log1p(np.exp(low - high))


def _ref_xlogy(x, y):
    """x * log(y), 0 where x == 0 unless y is NaN (scipy.special.xlogy's contract)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.where(x == 0, 0.0, x * np.log(y))
    return np.where(np.isnan(y), y, value)


def _ref_float_power(a, b):
    wide = np.complex128 if np.iscomplexobj(a) or np.iscomplexobj(b) else np.float64
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.power(np.asarray(a, wide), np.asarray(b, wide))


def _ref_heaviside(a, b):
    # PyTorch's `input == 0 ? values : input > 0` (NaN counts as negative, unlike NumPy's)
    return np.where(a == 0, b, a > 0).astype(np.result_type(a, b))
