"""Scalar functions of complex numbers that elementwise kernels apply to each element.

The twins of `scalar.py`'s functions for complex64/complex128 operands, where the real
version cannot serve (it calls `math`, or orders its operand). Each is named
``<op>_complex``; the op layer picks it when the operands are complex, and the loop
generators give these their own modules, so that no real kernel compiles more because
they exist. Ops whose real version is already right for complex numbers (add, mul, neg,
eq, pow, ...) use it as is: Numba compiles their complex signature only when it is met.

NumPy's ufuncs on complex scalars are what Numba compiles on the CPU, and what the CUDA
simulator (plain Python on NumPy scalars) runs without raising at poles. Numba's do not
follow C99's special values (Annex G, which PyTorch's c10::complex does) everywhere: exp,
pow, log2 and log1p are written out below where they part; the trigonometric and
hyperbolic functions still differ at NaN and infinite parts (the op database's expected
failures list them).
"""
import cmath
import math

import numpy as np
from numba.core import config
from numba.extending import register_jitable

# exp, expm1 and log1p of a real part, and exp and sqrt of a complex number. Compiled
# (Numba's CPU target, and its CUDA target, which has math's and cmath's functions but not
# NumPy's exp, expm1, log1p or sqrt ufuncs on scalars) they are math's and cmath's; under the
# CUDA simulator these functions run as plain Python, where math's raise at overflow and
# poles (math.exp(800.0), math.log1p(-1.0)) and NumPy's give inf and nan as the kernels do.
if config.ENABLE_CUDASIM:
    _exp_real, _expm1_real, _log1p_real = np.exp, np.expm1, np.log1p
    _exp_of_complex, _sqrt_of_complex = np.exp, np.sqrt
else:
    _exp_real, _expm1_real, _log1p_real = math.exp, math.expm1, math.log1p
    _exp_of_complex, _sqrt_of_complex = cmath.exp, cmath.sqrt

# --- arithmetic ------------------------------------------------------------------------


def add_complex(a, b):
    # PyTorch's add is a + alpha * b with alpha = 1 + 0j multiplied in: an infinite part of b
    # meets 0 * inf, so 0 + inf j gives nan + inf j, as PyTorch's.
    return a + b * (1.0 + 0j)


def sub_complex(a, b):
    return a + b * (-1.0 + 0j)


@register_jitable
def _mul_c99(a, b, c, d):
    # (a + bj)(c + dj) by C99's Annex G (G.5.1, the __muldc3 that C compilers call): where
    # the plain product is NaN in both parts, an infinite factor is boxed to +-1 and the
    # product recomputed, so that it stays infinite (cpow's exponent times log 0).
    ac, bd, ad, bc = a * c, b * d, a * d, b * c
    x, y = ac - bd, ad + bc
    if x == x or y == y:
        return complex(x, y)
    recalc = False
    if abs(a) == math.inf or abs(b) == math.inf:
        a = math.copysign(1.0 if abs(a) == math.inf else 0.0, a)
        b = math.copysign(1.0 if abs(b) == math.inf else 0.0, b)
        c = math.copysign(0.0, c) if c != c else c
        d = math.copysign(0.0, d) if d != d else d
        recalc = True
    if abs(c) == math.inf or abs(d) == math.inf:
        c = math.copysign(1.0 if abs(c) == math.inf else 0.0, c)
        d = math.copysign(1.0 if abs(d) == math.inf else 0.0, d)
        a = math.copysign(0.0, a) if a != a else a
        b = math.copysign(0.0, b) if b != b else b
        recalc = True
    if not recalc and (abs(ac) == math.inf or abs(bd) == math.inf or abs(ad) == math.inf or abs(bc) == math.inf):
        a = math.copysign(0.0, a) if a != a else a
        b = math.copysign(0.0, b) if b != b else b
        c = math.copysign(0.0, c) if c != c else c
        d = math.copysign(0.0, d) if d != d else d
        recalc = True
    if recalc:
        return complex(math.inf * (a * c - b * d), math.inf * (a * d + b * c))
    return complex(x, y)


@register_jitable
def _divide(a, b):
    # Smith's scaled division (NumPy's, and PyTorch's c10::complex): no overflow in |b|^2;
    # dividing by 0 gives a complex inf or NaN part by part.
    c, d = b.real, b.imag
    abs_c, abs_d = abs(c), abs(d)
    if abs_c >= abs_d:
        if abs_c == 0 and abs_d == 0:
            return complex(a.real / abs_c, a.imag / abs_d)
        rat = d / c
        scl = 1.0 / (c + d * rat)
        return complex((a.real + a.imag * rat) * scl, (a.imag - a.real * rat) * scl)
    rat = c / d
    scl = 1.0 / (d + c * rat)
    return complex((a.real * rat + a.imag) * scl, (a.imag * rat - a.real) * scl)


def div_complex(a, b):
    return _divide(a, b)


def reciprocal_complex(a):
    return _divide(1.0 + 0j, a)


def conj_complex(a):
    return a.conjugate()


# --- magnitude and phase (real results) ------------------------------------------------


def abs_complex(a):
    return np.hypot(a.real, a.imag)


def angle_complex(a):
    return np.arctan2(a.imag, a.real)


def sgn_complex(a):
    # z / |z|, and 0 at 0 (PyTorch's sgn).
    r = np.hypot(a.real, a.imag)
    if r == 0:
        return 0 * a
    return complex(a.real / r, a.imag / r)


# --- predicates (bool results) ---------------------------------------------------------


def isnan_complex(a):
    return a.real != a.real or a.imag != a.imag


def isinf_complex(a):
    return (a.real == math.inf or a.real == -math.inf or a.imag == math.inf or a.imag == -math.inf)


def isfinite_complex(a):
    return (a.real - a.real == 0) and (a.imag - a.imag == 0)  # inf - inf and NaN - NaN are NaN


# --- transcendental functions ----------------------------------------------------------


@register_jitable
def _exp(a):
    # C99's cexp: a real argument stays real (exp(800+0j) is inf+0j, not inf+nanj), an
    # infinite real part with an infinite or NaN imaginary one gives 0 or inf+nanj, and a
    # result past the float range keeps its phase (exp(x/2) squared, each with a factor).
    x, y = a.real, a.imag
    if y == 0:  # NaN + 0j too: NaN + 0j
        return complex(_exp_real(x), y)
    if x == math.inf and y - y != 0:
        return complex(x, math.nan)
    if x == -math.inf and y - y != 0:
        return complex(0.0, 0.0)
    if y - y != 0:  # y infinite or NaN, x finite or NaN
        return complex(math.nan, math.nan)
    c, s = np.cos(y), np.sin(y)
    e = _exp_real(x)
    if e == math.inf and x != math.inf:
        h = _exp_real(x / 2.0)
        return complex(h * c * h, h * s * h)
    return complex(e * c, e * s)


def exp_complex(a):
    return _exp(a)


def exp2_complex(a):
    return _exp(complex(a.real * 0.6931471805599453, a.imag * 0.6931471805599453))


def pow_complex(a, b):
    # C99's cpow (PyTorch's std::pow): exp(b * log(a)), so 0 ** b is 0 where Re(b) > 0 and
    # NaN or infinite elsewhere, as PyTorch's.
    log_a = np.log(a)
    return _exp(_mul_c99(b.real, b.imag, log_a.real, log_a.imag))


def expm1_complex(a):
    # exp(x)(cos y - 1) + (exp(x) - 1) + i exp(x) sin y, accurate near 0 in both parts.
    x, y = a.real, a.imag
    ex = _exp_real(x)
    s = np.sin(y / 2.0)
    return complex(_expm1_real(x) - 2.0 * ex * s * s, ex * np.sin(y))


def log_complex(a):
    return np.log(a)


def log2_complex(a):
    # Part by part: a complex product would turn log(0)'s -inf + 0j into -inf + nanj.
    r = np.log(a)
    return complex(r.real / 0.6931471805599453, r.imag / 0.6931471805599453)  # (PyTorch divides by ln 2)


def log10_complex(a):
    return np.log10(a)


def log1p_complex(a):
    return _log1p(a)


@register_jitable
def _log1p(a):
    # PyTorch's formula: log|1 + z| by log1p near 0 (exact for tiny z), the phase by atan2,
    # which keeps the sign of a zero imaginary part (log1p(-1.5 - 0j) has phase -pi).
    x, y = a.real, a.imag
    theta = np.arctan2(y, x + 1.0)
    if np.hypot(x, y) < 0.5:
        r = x * (2.0 + x) + y * y
        if r == 0:
            return complex(x, theta)
        return complex(0.5 * _log1p_real(r), theta)
    return complex(np.log(np.hypot(x + 1.0, y)), theta)


def logaddexp_complex(a, b):
    # PyTorch's log(exp(a) + exp(b)) of complex numbers: the operands ordered by real part
    # (a NaN part, b's first, wins both places and gives NaN), an infinite real part shared
    # by both computed plainly (-inf: the smaller operand; +inf: log of the sum of exps),
    # else max + log1p(exp(min - max)).
    if b.real != b.real or b.imag != b.imag or a.real != a.real or a.imag != a.imag:
        return complex(math.nan, math.nan)
    low, high = (a, b) if a.real < b.real else (b, a)
    if low.real - low.real != 0 and low.real == high.real:
        if low.real < 0:
            return low
        return np.log(_exp(low) + _exp(high))
    return _log1p(_exp(low - high)) + high


def sqrt_complex(a):
    return _sqrt_of_complex(a)


def rsqrt_complex(a):
    return _divide(1.0 + 0j, _sqrt_of_complex(a))


def sin_complex(a):
    return np.sin(a)


def cos_complex(a):
    return np.cos(a)


def tan_complex(a):
    return np.tan(a)


def asin_complex(a):
    return np.arcsin(a)


def acos_complex(a):
    return np.arccos(a)


def atan_complex(a):
    return np.arctan(a)


def sinh_complex(a):
    return np.sinh(a)


def cosh_complex(a):
    return np.cosh(a)


def tanh_complex(a):
    return np.tanh(a)


def asinh_complex(a):
    return np.arcsinh(a)


def acosh_complex(a):
    return np.arccosh(a)


def atanh_complex(a):
    return np.arctanh(a)


def lerp_complex(start, end, weight):
    # PyTorch's formula for complex weights: which end it starts from depends on |weight|.
    if np.hypot(weight.real, weight.imag) < 0.5:
        return start + weight * (end - start)
    return end - (end - start) * (1 - weight)


def sigmoid_complex(a):
    return _divide(1.0 + 0j, 1.0 + _exp_of_complex(-a))
