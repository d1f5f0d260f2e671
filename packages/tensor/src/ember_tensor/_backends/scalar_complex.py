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
pow, log2, log1p, expm1, sinh/cosh/tanh (and sin/cos/tan through them), acosh, asinh/atanh
(and asin/atan through them) and acos are written out below where they part, with
glibc's choices where C99 leaves one open (PyTorch's CPU kernels call glibc).
"""
import cmath
import math

import numpy as np
from numba.core import config
from numba.extending import register_jitable

# exp, expm1, log1p, sinh and cosh of a real part, and exp and sqrt of a complex number. Compiled
# (Numba's CPU target, and its CUDA target, which has math's and cmath's functions but not
# NumPy's exp, expm1, log1p or sqrt ufuncs on scalars) they are math's and cmath's; under the
# CUDA simulator these functions run as plain Python, where math's raise at overflow and
# poles (math.exp(800.0), math.log1p(-1.0)) and NumPy's give inf and nan as the kernels do.
if config.ENABLE_CUDASIM:
    _exp_real, _expm1_real, _log1p_real = np.exp, np.expm1, np.log1p
    _sinh_real, _cosh_real = np.sinh, np.cosh
    _exp_of_complex, _sqrt_of_complex = np.exp, np.sqrt
else:
    _exp_real, _expm1_real, _log1p_real = math.exp, math.expm1, math.log1p
    _sinh_real, _cosh_real = math.sinh, math.cosh
    _exp_of_complex, _sqrt_of_complex = cmath.exp, cmath.sqrt

# Past this |x| or |y| the inverse functions' leading terms are exact to the last bit
# (asinh z = log 2z, atanh z = 1/z + pi/2 j), and Kahan's products, (1 - x)^2 or |1 + z|
# may overflow near 2^1024: they are computed from halved parts there.
_ASYMPTOTIC = 2.0 ** 500
# Below this |x| and |y|, asinh(z) = z - z^3/6 is z to the last bit.
_ASINH_IS_Z = 1e-9
_LN2 = 0.6931471805599453
_HALF_PI = 1.5707963267948966
_QUARTER_PI = 0.7853981633974483


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
    # c10's formula, expm1(x) cos y - 2 sin(y/2)^2 + i exp(x) sin y: accurate near 0 in both
    # parts, and infinite for an infinite x (inf + nan j at y = 0, as PyTorch's).
    x, y = a.real, a.imag
    s = np.sin(y / 2.0)
    return complex(_expm1_real(x) * np.cos(y) - 2.0 * s * s, _exp_real(x) * np.sin(y))


def log_complex(a):
    return np.log(a)


def log2_complex(a):
    # Part by part: a complex product would turn log(0)'s -inf + 0j into -inf + nanj.
    r = np.log(a)
    return complex(r.real / 0.6931471805599453, r.imag / 0.6931471805599453)  # (PyTorch divides by ln 2)


def log10_complex(a):
    return np.log10(a)


@register_jitable
def _is_complex64(a):
    # Whether a's parts are float32: x ** 0 is 1 for every x (NaN and inf too) and keeps the
    # part's type, compiled and under the simulator alike, and 1 + 2^-30 is 1 in float32 alone.
    one = a.real ** np.float32(0.0)
    return one + np.float32(2.0 ** -30) == one


def log1p_complex(a):
    # PyTorch's CPU log1p (Kahan's log(u) z / (u - 1), u = 1 + z, returning log(u) where
    # u - 1 == z and z where u == 1) is c10's formula below for finite z, as accurate; its
    # values at infinite and NaN parts are written out. At an infinite imaginary part Kahan's
    # formula is log(u) where 1 + x rounds back to x, in the operand's precision, and 0 * inf
    # (nan + nan j) where it does not, as PyTorch's.
    x, y = np.float64(a.real), np.float64(a.imag)
    if x - x == 0 and y - y == 0:
        return _log1p(complex(x, y))
    if x - x == 0 and y == y:  # y = +-inf
        shifted = 1.0 + x
        exact = shifted - 1.0 == x
        if _is_complex64(a):
            # float32's 1 + x and its - 1: the float64 results (exact, or rounded where
            # float32's would round the same way) rounded to float32
            shifted = np.float32(shifted)
            exact = np.float32(shifted - 1.0) == x
        if exact:
            return complex(math.inf, math.atan2(y, shifted))
        return complex(math.nan, math.nan)
    if x == x and y == y:  # x = +-inf, y finite or infinite: log(u) = inf + arg(z) j
        return complex(math.inf, math.atan2(y, x))
    return complex(math.nan, math.nan)


@register_jitable
def _log1p(a):
    # c10's formula: log|1 + z| by log1p near 0 (exact for tiny z), the phase by atan2,
    # which keeps the sign of a zero imaginary part (log1p(-1.5 - 0j) has phase -pi); |1 + z|
    # halved where it would overflow.
    x, y = a.real, a.imag
    theta = np.arctan2(y, x + 1.0)
    if np.hypot(x, y) < 0.5:
        r = x * (2.0 + x) + y * y
        if r == 0:
            return complex(x, theta)
        return complex(0.5 * _log1p_real(r), theta)
    if abs(x) > _ASYMPTOTIC or abs(y) > _ASYMPTOTIC:
        return complex(np.log(np.hypot(x / 2.0 + 0.5, y / 2.0)) + _LN2, theta)
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


@register_jitable
def _sqrt_scaled(w):
    # sqrt(w), scaled by 2^600 (exactly) where both parts are tiny: Numba's compiled
    # cmath.sqrt loses bits on subnormal parts, which Kahan's formulas meet at 1 + tiny j.
    if abs(w.real) < 1e-300 and abs(w.imag) < 1e-300:
        r = _sqrt_of_complex(complex(w.real * 2.0 ** 600, w.imag * 2.0 ** 600))
        return complex(r.real * 2.0 ** -300, r.imag * 2.0 ** -300)
    return _sqrt_of_complex(w)


@register_jitable
def _log_twice_abs(x, y):
    # log |2z|, for parts so large that hypot(x, y) may overflow.
    return math.log(math.hypot(x / 2.0, y / 2.0)) + 2.0 * _LN2


# --- hyperbolic functions, and the trigonometric ones through them (C99's Annex G) -----
# C99's tables (G.6.2) for csinh, ccosh and ctanh, with glibc's choices where C99 leaves a
# sign open (PyTorch's values: its CPU kernels call the C library's complex functions), and
# csin(z) = -i csinh(iz), ccos(z) = ccosh(iz), ctan(z) = -i ctanh(iz) as C99 defines them.
# Parts are taken as float64 (np.float64, as float() keeps a float32 in Numba), so the overflow
# limits are float64's and a complex64 result rounds once, when stored.

# Past this |x|, exp(|x|) overflows float64 while exp(|x|) cos y may not: such a part is
# computed as exp(|x|/2) (cos y / 2) exp(|x|/2), finite as long as the true value is.
_EXP_OVERFLOW = 709.0
# Past this |x|, tanh(x + yj) is sign(x) + 4 sin y cos y exp(-2|x|) j to the last bit, and
# sinh(x)^2 would overflow in the general formula.
_TANH_SATURATES = 354.0


@register_jitable
def _sinh(x, y, open_inf):
    # sinh(x + yj) = sinh x cos y + cosh x sin y j, x and y floats. `open_inf` is the real
    # part at an infinite x and a y that is not finite, whose sign C99 leaves open: glibc's
    # csinh has +inf, its csin (-i csinh(iz)) the opposite.
    if x - x == 0 and y - y == 0:  # both finite
        if y == 0:  # a real argument stays real: sinh(x) + y j, with y's signed zero
            return complex(_sinh_real(x), y)
        c, s = np.cos(y), np.sin(y)
        if abs(x) < _EXP_OVERFLOW:
            return complex(_sinh_real(x) * c, _cosh_real(x) * s)
        h = _exp_real(abs(x) / 2.0)
        return complex(math.copysign(h, x) * (0.5 * c) * h, h * (0.5 * s) * h)
    if x - x == 0:  # y infinite or NaN: +-0 + nan j at x = +-0, else nan + nan j
        return complex(x, y - y) if x == 0 else complex(math.nan, math.nan)
    if x != x:  # NaN + 0j stays NaN + 0j, any other y gives nan + nan j
        return complex(x, y) if y == 0 else complex(math.nan, math.nan)
    # x = +-inf: sinh(+-inf) cis(y), keeping y's zero; open_inf + nan j where y is not finite
    if y == 0:
        return complex(x, y)
    if y - y == 0:
        return complex(x * np.cos(y), math.inf * np.sin(y))
    return complex(open_inf, y - y)


@register_jitable
def _cosh(x, y):
    # cosh(x + yj) = cosh x cos y + sinh x sin y j, x and y floats.
    if x - x == 0 and y - y == 0:
        if y == 0:  # cosh(x) + (sign of x y) 0 j
            return complex(_cosh_real(x), x * y)
        c, s = np.cos(y), np.sin(y)
        if abs(x) < _EXP_OVERFLOW:
            return complex(_cosh_real(x) * c, _sinh_real(x) * s)
        h = _exp_real(abs(x) / 2.0)
        return complex(h * (0.5 * c) * h, math.copysign(h, x) * (0.5 * s) * h)
    if x - x == 0:  # y infinite or NaN: nan + 0j at x = +-0, else nan + nan j
        return complex(y - y, 0.0) if x == 0 else complex(math.nan, math.nan)
    if x != x:
        return complex(x, y) if y == 0 else complex(math.nan, math.nan)
    # x = +-inf: inf cis(y) with sinh's sign in the imaginary part
    if y == 0:
        return complex(math.inf, math.copysign(1.0, x) * y)
    if y - y == 0:
        return complex(math.inf * np.cos(y), x * np.sin(y))
    return complex(math.inf, y - y)


@register_jitable
def _tanh(x, y):
    # tanh(x + yj) = (sinh x cosh x + sin y cos y j) / (sinh(x)^2 + cos(y)^2), x and y floats.
    if x - x == 0 and y - y == 0:
        s, c = np.sin(y), np.cos(y)
        if abs(x) > _TANH_SATURATES:
            return complex(math.copysign(1.0, x), 4.0 * s * c * _exp_real(-2.0 * abs(x)))
        sh = _sinh_real(x)
        den = sh * sh + c * c
        return complex(sh * _cosh_real(x) / den, s * c / den)
    if x - x == 0:  # y infinite or NaN: +-0 + nan j at x = +-0 (C23's choice, glibc's), else nan + nan j
        return complex(x, y - y) if x == 0 else complex(math.nan, math.nan)
    if x != x:
        return complex(x, y) if y == 0 else complex(math.nan, math.nan)
    # x = +-inf: +-1 and a zero with the sign of sin(2y), or of y where y is not finite
    if y - y == 0:
        return complex(math.copysign(1.0, x), math.copysign(0.0, np.sin(y) * np.cos(y)))
    return complex(math.copysign(1.0, x), math.copysign(0.0, y))


def sinh_complex(a):
    return _sinh(np.float64(a.real), np.float64(a.imag), math.inf)


def cosh_complex(a):
    return _cosh(np.float64(a.real), np.float64(a.imag))


def tanh_complex(a):
    return _tanh(np.float64(a.real), np.float64(a.imag))


def sin_complex(a):
    # sin(z) = -i sinh(iz), iz = -y + xj
    w = _sinh(-np.float64(a.imag), np.float64(a.real), -math.inf)
    return complex(w.imag, -w.real)


def cos_complex(a):
    # cos(z) = cosh(iz)
    return _cosh(-np.float64(a.imag), np.float64(a.real))


def tan_complex(a):
    # tan(z) = -i tanh(iz)
    w = _tanh(-np.float64(a.imag), np.float64(a.real))
    return complex(w.imag, -w.real)


def acosh_complex(a):
    # Kahan's formula for finite arguments ("Branch cuts for complex elementary functions"):
    #   acosh z = asinh Re(conj(sqrt(z - 1)) sqrt(z + 1)) + 2 atan2(Im sqrt(z - 1), Re sqrt(z + 1)) j,
    # accurate for tiny parts, right on both sides of the cut (signed zeros), and free of
    # overflow; Numba's cacosh loses the first two (acosh(1e-30j) has real part 0,
    # acosh(-1.5 - 0j) lands on the wrong side). C99's table (G.6.2.1) where a part is
    # infinite or NaN: an infinite real part, the phase a multiple of pi/4.
    x, y = np.float64(a.real), np.float64(a.imag)
    if x - x == 0 and y - y == 0:
        if abs(x) > _ASYMPTOTIC or abs(y) > _ASYMPTOTIC:  # log 2z, where the products overflow
            return complex(_log_twice_abs(x, y), math.atan2(y, x))
        below = _sqrt_scaled(complex(x - 1.0, y))
        above = _sqrt_scaled(complex(x + 1.0, y))
        return complex(math.asinh(below.real * above.real + below.imag * above.imag),
                       2.0 * math.atan2(below.imag, above.real))
    if y == math.inf or y == -math.inf:  # x + inf j: phase pi/2, or pi/4 or 3pi/4 at x = +-inf
        if x != x:
            return complex(math.inf, x)
        phase = 1.5707963267948966
        if x == math.inf:
            phase = 0.7853981633974483
        elif x == -math.inf:
            phase = 2.356194490192345
        return complex(math.inf, math.copysign(phase, y))
    if x == math.inf or x == -math.inf:  # inf + y j: phase 0 or pi; nan where y is NaN
        if y != y:
            return complex(math.inf, y)
        return complex(math.inf, math.copysign(0.0 if x > 0 else math.pi, y))
    if x == 0 and y != y:  # +-0 + nan j: nan + pi/2 j (glibc's)
        return complex(y, 1.5707963267948966)
    return complex(math.nan, math.nan)


# --- inverse trigonometric and hyperbolic functions (Kahan's formulas, C99's tables) -----
# Finite arguments by Kahan's formulas ("Branch cuts for complex elementary functions"),
# which keep tiny parts and the side of a branch cut (signed zeros) and, past _ASYMPTOTIC,
# by their limits, where the sqrt products would overflow; C99's tables (G.6.2.2, G.6.2.3)
# where a part is infinite or NaN, with glibc's choices (PyTorch's CPU kernels call glibc's
# casinh, casin, cacos, catanh and catan). asin(z) = -i asinh(iz) and atan(z) = -i atanh(iz)
# as C99 defines them; their NaN cases are written out, as glibc does, because iz negates a
# NaN and the tables copy a NaN's sign. Parts are float64, as for the hyperbolic functions.

@register_jitable
def _asinh(x, y):
    # asinh(x + yj) for x and y not NaN: odd, and conj(asinh z) = asinh(conj z).
    if x - x == 0 and y - y == 0:
        if abs(x) > _ASYMPTOTIC or abs(y) > _ASYMPTOTIC:
            return complex(math.copysign(_log_twice_abs(x, y), x), math.atan2(y, abs(x)))
        if abs(x) < _ASINH_IS_Z and abs(y) < _ASINH_IS_Z:  # Kahan's products lose subnormal bits
            return complex(x, y)
        # Kahan: with p = sqrt(1 + iz) and m = sqrt(1 - iz),
        #   asinh z = asinh Im(conj(m) p) + atan2(y, Re(p m)) j,
        # 1 + iz = (1 - y) + x j and 1 - iz = (1 + y) - x j built part by part (signed zeros).
        plus = _sqrt_scaled(complex(1.0 - y, x))
        minus = _sqrt_scaled(complex(1.0 + y, -x))
        return complex(math.asinh(plus.imag * minus.real - plus.real * minus.imag),
                       math.atan2(y, plus.real * minus.real - plus.imag * minus.imag))
    if y - y != 0:  # y infinite: inf + pi/2 j, pi/4 j where x is infinite too
        return complex(math.copysign(math.inf, x), math.copysign(_QUARTER_PI if x - x != 0 else _HALF_PI, y))
    return complex(x, math.copysign(0.0, y))  # x infinite, y finite


@register_jitable
def _atanh(x, y):
    # atanh(x + yj) for x and y not NaN: odd, and conj(atanh z) = atanh(conj z).
    if x - x != 0 or y - y != 0:  # an infinite part: +-0 + pi/2 j
        return complex(math.copysign(0.0, x), math.copysign(_HALF_PI, y))
    if math.copysign(1.0, x) < 0:  # computed as -atanh(-z), where log1p's argument is not near -1
        w = _atanh_right(-x, -y)
        return complex(-w.real, -w.imag)
    return _atanh_right(x, y)


@register_jitable
def _atanh_right(x, y):
    # atanh(x + yj) for finite y and x >= +0.
    if x > _ASYMPTOTIC or abs(y) > _ASYMPTOTIC:  # 1/z + pi/2 j: x/|z|^2, scaled against overflow
        h = math.hypot(x / 2.0, y / 2.0)
        return complex(x / h / h / 4.0, math.copysign(_HALF_PI, y))
    if x == 1.0 and y != 0 and abs(y) < 1e-150:  # y^2 underflows: log(|1 + z| / |y|) / 2
        return complex((math.log(math.hypot(y, 2.0)) - math.log(abs(y))) / 2.0,
                       math.copysign(math.atan2(2.0, -abs(y)) / 2.0, y))
    # Re = log(|1 + z|^2 / |1 - z|^2) / 4 = log1p(4x / |1 - z|^2) / 4, Im = arg((1 + z)(1 - conj z)) / 2
    return complex(_log1p_real(4.0 * x / ((1.0 - x) * (1.0 - x) + y * y)) / 4.0,
                   math.atan2(2.0 * y, (1.0 - x) * (1.0 + x) - y * y) / 2.0)


def asinh_complex(a):
    x, y = np.float64(a.real), np.float64(a.imag)
    if x == x and y == y:
        return _asinh(x, y)
    if y - y != 0 and y == y:  # NaN + inf j: inf + nan j
        return complex(math.inf, x)
    if y == 0:  # NaN + 0j stays
        return complex(x, y)
    if x - x != 0 and x == x:  # +-inf + nan j: +-inf + nan j
        return complex(x, y)
    return complex(math.nan, math.nan)


@register_jitable
def _asin(x, y):
    # asin z = -i asinh(iz), iz = -y + xj; x and y floats.
    if x == x and y == y:
        w = _asinh(-y, x)
        return complex(w.imag, -w.real)
    if x == 0:  # +-0 + nan j stays
        return complex(x, y)
    if x - x != 0 and x == x or y - y != 0 and y == y:  # an infinite part: nan +- inf j
        return complex(math.nan, math.copysign(math.inf, y) if y == y else math.inf)
    return complex(math.nan, math.nan)


def asin_complex(a):
    return _asin(np.float64(a.real), np.float64(a.imag))


def acos_complex(a):
    # PyTorch's complex128 acos is its vectorised pi/2 - asin z, part by part (the imaginary
    # part 0 - Im asin z, +0 on the real axis; the real part cancels to 0 where asin's is
    # pi/2). Its complex64 acos is glibc's cacosf: Kahan's formula for finite nonzero z,
    #   acos z = 2 atan2(Re sqrt(1 - z), Re sqrt(1 + z)) + asinh Im(conj(sqrt(1 + z)) sqrt(1 - z)) j,
    # and pi/2 - asin z elsewhere, with -Im asin z and a real part +0 where it cancels.
    x, y = np.float64(a.real), np.float64(a.imag)
    if not _is_complex64(a):
        w = _asin(x, y)
        return complex(_HALF_PI - w.real, 0.0 - w.imag)
    if x - x == 0 and y - y == 0 and not (x == 0 and y == 0):
        if abs(x) > _ASYMPTOTIC or abs(y) > _ASYMPTOTIC:  # -i log 2z
            return complex(math.atan2(abs(y), x), -math.copysign(_log_twice_abs(x, y), y))
        below = _sqrt_scaled(complex(1.0 - x, -y))
        above = _sqrt_scaled(complex(1.0 + x, y))
        return complex(2.0 * math.atan2(below.real, above.real),
                       math.asinh(above.real * below.imag - above.imag * below.real))
    w = _asin(x, y)
    real = _HALF_PI - w.real
    return complex(0.0 if real == 0 else real, -w.imag)


def atanh_complex(a):
    x, y = np.float64(a.real), np.float64(a.imag)
    if x == x and y == y:
        return _atanh(x, y)
    if y - y != 0 and y == y:  # NaN + inf j: 0 + pi/2 j
        return complex(0.0, math.copysign(_HALF_PI, y))
    if x == 0 or (x - x != 0 and x == x):  # +-0 or +-inf + nan j: +-0 + nan j
        return complex(math.copysign(0.0, x), y)
    return complex(math.nan, math.nan)


def atan_complex(a):
    # atan z = -i atanh(iz), iz = -y + xj
    x, y = np.float64(a.real), np.float64(a.imag)
    if x == x and y == y:
        w = _atanh(-y, x)
        return complex(w.imag, -w.real)
    if x - x != 0 and x == x:  # +-inf + nan j: +-pi/2 + 0j
        return complex(math.copysign(_HALF_PI, x), 0.0)
    if y - y != 0 and y == y or y == 0:  # NaN + inf j, NaN +- 0j: nan +- 0j
        return complex(math.nan, math.copysign(0.0, y))
    return complex(math.nan, math.nan)


def lerp_complex(start, end, weight):
    # PyTorch's formula for complex weights: which end it starts from depends on |weight|.
    if np.hypot(weight.real, weight.imag) < 0.5:
        return start + weight * (end - start)
    return end - (end - start) * (1 - weight)


def sigmoid_complex(a):
    return _divide(1.0 + 0j, 1.0 + _exp_of_complex(-a))
