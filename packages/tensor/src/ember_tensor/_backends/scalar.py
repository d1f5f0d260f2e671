"""Scalar functions that elementwise kernels apply to each element.

Each is a plain Python function of numbers so that the same source compiles for the
CPU (inlined into Numba loops) and for CUDA (as a device function). Float16 and
bfloat16 inputs reach these as float32, so only float32/float64/int/bool occur.
"""
import math

import numpy as np
from numba.extending import register_jitable

# --- binary arithmetic -------------------------------------------------------------


def add(a, b):
    return a + b


def sub(a, b):
    return a - b


def mul(a, b):
    return a * b


def div(a, b):
    return a / b


def div_trunc(a, b):
    # C-style integer division rounding toward zero (floats use trunc(a / b) instead).
    q = a // b
    if q < 0 and q * b != a:
        q += 1
    return q


def floor_divide(a, b):
    # Python's // is floor division for ints and floats alike, which is PyTorch's rule.
    # (Floats take floor_divide_float: the CUDA target gets // wrong for an infinite b.)
    return a // b


def floor_divide_float(a, b):
    # Python's // for floats. Numba compiles a float // through LLVM's frem, which the
    # CUDA target lowers as a - trunc(a / b) * b: NaN for a finite a over +-inf (seen on an
    # H100). There Python's rule is: NaN, else +-0 (a's sign times b's), else -1 when a and
    # b lie on opposite sides of zero.
    if b - b != b - b:  # b is +-inf or NaN
        if b != b or a - a != a - a:
            return b - b
        if a == 0:
            return a if b > 0 else -a
        return (a - a) if (a < 0) == (b < 0) else (a - a) - 1.0
    return a // b


def remainder(a, b):
    # Python's % takes the sign of the divisor, like torch.remainder.
    # (Floats take remainder_float, as floor_divide_float.)
    return a % b


def remainder_float(a, b):
    # Python's % for floats, with an infinite b written out (NaN through frem on CUDA, as in
    # floor_divide_float): NaN, else a when it lies on b's side of zero (+-0 taking b's
    # sign), else b itself.
    if b - b != b - b:  # b is +-inf or NaN
        if b != b or a - a != a - a:
            return b - b
        if a == 0:
            return (a - a) if b > 0 else -(a - a)
        return a if (a < 0) == (b < 0) else b
    return a % b


def fmod(a, b):
    return np.fmod(a, b)


def fmod_int(a, b):
    # C's %: the remainder of division rounded toward zero (sign of `a`). Numba's np.fmod
    # on integers is wrong, so integer tensors use this one.
    r = a % b  # Python's: the sign of b
    if r != 0 and (r < 0) != (a < 0):
        r -= b
    return r


def pow(a, b):  # noqa: A001 - PyTorch's name
    return a ** b


def pow_int(a, b):
    # Integer powers by squaring (wrapping like C); a negative exponent gives 0 except for
    # bases 1 and -1, as in PyTorch (1 / a**|b| truncated toward zero).
    if b < 0:
        if a == 1:
            return 1
        if a == -1:
            return -1 if b % 2 != 0 else 1
        return 0
    result = 1
    base = a
    while b > 0:
        if b & 1:
            result = result * base
        base = base * base
        b = b >> 1
    return result


def atan2(a, b):
    return math.atan2(a, b)


def hypot(a, b):
    return math.hypot(a, b)


def copysign(a, b):
    return math.copysign(a, b)


def maximum(a, b):
    # NaN propagates, as in torch.maximum; on a tie (-0. and 0.) the first operand wins,
    # as C++'s std::max does in PyTorch's kernels: clamp(-0., min=0.) stays -0.
    if a != a:
        return a
    if b != b:
        return b
    return b if a < b else a


def minimum(a, b):
    if a != a:
        return a
    if b != b:
        return b
    return b if b < a else a


def fmax(a, b):
    # NaN is ignored unless both are NaN, as in torch.fmax.
    if a != a:
        return b
    if b != b:
        return a
    return a if a > b else b


def fmin(a, b):
    if a != a:
        return b
    if b != b:
        return a
    return a if a < b else b


def eq(a, b):
    return a == b


def ne(a, b):
    return a != b


def lt(a, b):
    return a < b


def le(a, b):
    return a <= b


def gt(a, b):
    return a > b


def ge(a, b):
    return a >= b


def logical_and(a, b):
    return (a != 0) and (b != 0)


def logical_or(a, b):
    return (a != 0) or (b != 0)


def logical_xor(a, b):
    return (a != 0) != (b != 0)


def bitwise_and(a, b):
    return a & b


def bitwise_or(a, b):
    return a | b


def bitwise_xor(a, b):
    return a ^ b


def bitwise_left_shift(a, b):
    # Shifting by a negative amount or by the type's width or more gives 0 in PyTorch; in
    # C (and LLVM) it is undefined. Shift in 64 bits: storing the result into a narrower
    # type keeps its low bits, which is the narrow shift's result.
    if b < 0 or b > 63:
        return 0
    return np.int64(a) << np.int64(b)


def bitwise_right_shift(a, b):
    # An out-of-range amount leaves only the sign (0 or -1), as PyTorch's kernel does; in 64
    # bits every amount below 63 is exact for narrower types too (the sign is extended).
    x = np.int64(a)
    if b < 0 or b > 63:
        return x >> 63
    return x >> np.int64(b)


@register_jitable
def _gcd_of_magnitudes(a, b):
    # Euclid on |a| and |b|, as PyTorch's calc_gcd (gcd(0, 0) = 0). Written out with C's
    # truncating % (Python's and Numba's floor): the two differ only for the most negative
    # value, whose |.| stays negative, as in PyTorch.
    x = a if a >= 0 else -a  # (this module's abs is the elementwise kernel's)
    y = b if b >= 0 else -b
    while x != 0:
        r = y % x
        if r != 0 and (r < 0) != (y < 0):
            r -= x
        y = x
        x = r
    return y


def gcd(a, b):
    return _gcd_of_magnitudes(a, b)


def lcm(a, b):
    # |a / gcd * b|, 0 when gcd is 0; the product wraps in the operand's width, as in C.
    g = _gcd_of_magnitudes(a, b)
    if g == 0:
        return 0 * a
    m = a // g * b
    return m if m >= 0 else -m


# --- unary ---------------------------------------------------------------------------


def copy(a):
    return a


def neg(a):
    return -a


def abs(a):  # noqa: A001
    # Zero (either sign) and NaN take the last branch: a - a is +0. for -0., as PyTorch's
    # fabs gives (a >= 0 would return -0. itself), and keeps a NaN's sign, unlike -a.
    return a if a > 0 else (-a if a < 0 else a - a)


def sign(a):
    # PyTorch's (0 < a) - (a < 0): NaN and -0. give 0.
    if a > 0:
        return 1
    if a < 0:
        return -1
    return 0


def exp(a):
    return math.exp(a)


def exp2(a):
    return 2.0 ** a


def expm1(a):
    return math.expm1(a)


def log(a):
    return np.log(a)


def log2(a):
    return np.log2(a)


def log10(a):
    return np.log10(a)


def log1p(a):
    return np.log1p(a)


def sqrt(a):
    return np.sqrt(a)


def rsqrt(a):
    return 1.0 / np.sqrt(a)


def square(a):
    return a * a


def reciprocal(a):
    return 1.0 / a


def sin(a):
    return math.sin(a)


def cos(a):
    return math.cos(a)


def tan(a):
    return math.tan(a)


def asin(a):
    return np.arcsin(a)


def acos(a):
    return np.arccos(a)


def atan(a):
    return math.atan(a)


def sinh(a):
    return math.sinh(a)


def cosh(a):
    return math.cosh(a)


def tanh(a):
    return math.tanh(a)


def asinh(a):
    return math.asinh(a)


def acosh(a):
    return np.arccosh(a)


def atanh(a):
    return np.arctanh(a)


def sigmoid(a):
    # Two branches keep exp() from overflowing for large |a|.
    if a >= 0:
        return 1.0 / (1.0 + math.exp(-a))
    e = math.exp(a)
    return e / (1.0 + e)


def logit(a):
    return np.log(a / (1.0 - a))


def erf(a):
    return math.erf(a)


def erfc(a):
    return math.erfc(a)


def erfinv(y):
    # Giles' single-precision approximation, then two Newton steps for full precision.
    if y <= -1.0:
        return -math.inf if y == -1.0 else math.nan
    if y >= 1.0:
        return math.inf if y == 1.0 else math.nan
    w = -math.log((1.0 - y) * (1.0 + y))
    if w < 5.0:
        w = w - 2.5
        p = 2.81022636e-08
        p = 3.43273939e-07 + p * w
        p = -3.5233877e-06 + p * w
        p = -4.39150654e-06 + p * w
        p = 0.00021858087 + p * w
        p = -0.00125372503 + p * w
        p = -0.00417768164 + p * w
        p = 0.246640727 + p * w
        p = 1.50140941 + p * w
    else:
        w = math.sqrt(w) - 3.0
        p = -0.000200214257
        p = 0.000100950558 + p * w
        p = 0.00134934322 + p * w
        p = -0.00367342844 + p * w
        p = 0.00573950773 + p * w
        p = -0.0076224613 + p * w
        p = 0.00943887047 + p * w
        p = 1.00167406 + p * w
        p = 2.83297682 + p * w
    x = p * y
    for _ in range(2):
        err = math.erf(x) - y
        x = x - err / (1.1283791670955126 * math.exp(-x * x))
    return x


def lgamma(a):
    return math.lgamma(a)


def digamma(x):
    # Reflection for x < 0.5, recurrence up to x >= 6, then the asymptotic series.
    if x == 0.0:
        return -math.inf if math.copysign(1.0, x) > 0 else math.inf
    if x < 0.0 and x == math.floor(x):
        return math.nan
    result = 0.0
    if x < 0.5:
        result = -math.pi / math.tan(math.pi * x)
        x = 1.0 - x
    while x < 6.0:
        result -= 1.0 / x
        x += 1.0
    inv = 1.0 / x
    inv2 = inv * inv
    series = inv2 * (1.0 / 12 - inv2 * (1.0 / 120 - inv2 * (1.0 / 252 - inv2 * (
        1.0 / 240 - inv2 * (1.0 / 132)))))
    return result + math.log(x) - 0.5 * inv - series


# --- special functions (torch.special) ---------------------------------------------------
# A helper shared by several of them is a register_jitable function (callable from compiled
# code on the CPU and on CUDA; a plain function otherwise). Under the CUDA simulator they run as plain
# Python, where math.exp overflow, math.log(0) and math.sin(inf) raise: the guards below
# keep them off those paths (compiled code would give inf/-inf/NaN there anyway).


@register_jitable
def _bessel_i(x, order, scaled):
    # I_order(x) for order 0 or 1 (exp(-|x|) I_order(x) if scaled): the power series up to
    # |x| = 30 (positive terms, no cancellation), then Hankel's asymptotic series.
    ax = -x if x < 0 else x
    if ax != ax:
        return x
    if ax == math.inf and not scaled:
        return math.nan  # PyTorch's exp(x) * chbevl(...) / sqrt(x) is inf / inf there
    if ax <= 30.0:
        y = 0.25 * ax * ax
        term = 1.0
        total = 1.0
        for k in range(1, 200):
            term = term * y / (k * (k + order))
            total += term
            if term < 1e-17 * total:
                break
        if order == 1:
            total = total * 0.5 * ax
        if scaled:
            total = total * math.exp(-ax)
    else:
        mu = 4.0 * order * order
        term = 1.0
        total = 1.0
        for k in range(1, 60):
            term = -term * (mu - (2 * k - 1) * (2 * k - 1)) / (8.0 * k * ax)
            total += term
            if -1e-17 * total < term < 1e-17 * total:
                break
        total = total / math.sqrt(2.0 * math.pi * ax)
        if not scaled:
            if ax > 1500.0:
                total = math.inf
            else:
                half = math.exp(0.5 * ax)  # exp(ax) in two halves: only the product overflows
                total = total * half * half
    if order == 1 and x < 0:
        return -total
    return total


def i0(x):
    return _bessel_i(x, 0, False)


def i0e(x):
    return _bessel_i(x, 0, True)


def i1(x):
    return _bessel_i(x, 1, False)


def i1e(x):
    return _bessel_i(x, 1, True)


def erfcx(x):
    # exp(x^2) erfc(x): direct below 4 (erfc has not underflowed), else the continued
    # fraction 1 / (sqrt(pi) (x + (1/2) / (x + (2/2) / (x + ...)))).
    if x < -27.0:
        return math.inf
    if x < 4.0:
        half = math.exp(0.5 * x * x)
        return half * math.erfc(x) * half
    f = x
    for n in range(40, 0, -1):
        f = x + 0.5 * n / f
    return 1.0 / (1.7724538509055159 * f)


def log_ndtr(x):
    # log Phi(x): log1p of the upper tail above 0, log of erfc down to -20, then the
    # asymptotic series of the Mills ratio (erfc has underflowed by about -38).
    if x > 0.0:
        return math.log1p(-0.5 * math.erfc(x * 0.7071067811865476))
    if x >= -20.0:
        return math.log(0.5 * math.erfc(-x * 0.7071067811865476))
    if x != x:
        return x
    if x == -math.inf:
        return -math.inf
    inv2 = 1.0 / (x * x)
    term = 1.0
    total = 1.0
    for k in range(1, 25):
        term = -term * (2 * k - 1) * inv2
        total += term
    return -0.5 * x * x - math.log(-x) - 0.9189385332046728 + math.log(total)


def ndtri(p):
    # The inverse of Phi: Acklam's rational approximation for the lower half (relative
    # error 1e-9), then two Halley steps on Phi(x) = q; the upper half by symmetry.
    if p != p or p < 0.0 or p > 1.0:
        return math.nan
    if p == 0.0:
        return -math.inf
    if p == 1.0:
        return math.inf
    upper = p > 0.5
    q = 1.0 - p if upper else p  # exact for p > 0.5
    if q < 0.02425:
        r = math.sqrt(-2.0 * math.log(q))
        x = (((((-7.784894002430293e-03 * r - 3.223964580411365e-01) * r - 2.400758277161838e+00) * r
               - 2.549732539343734e+00) * r + 4.374664141464968e+00) * r + 2.938163982698783e+00) / (
            (((7.784695709041462e-03 * r + 3.224671290700398e-01) * r + 2.445134137142996e+00) * r
             + 3.754408661907416e+00) * r + 1.0)
    else:
        t = q - 0.5
        r = t * t
        x = (((((-3.969683028665376e+01 * r + 2.209460984245205e+02) * r - 2.759285104469687e+02) * r
               + 1.383577518672690e+02) * r - 3.066479806614716e+01) * r + 2.506628277459239e+00) * t / (
            ((((-5.447609879822406e+01 * r + 1.615858368580409e+02) * r - 1.556989798598866e+02) * r
              + 6.680131188771972e+01) * r - 1.328068155288572e+01) * r + 1.0)
    for _ in range(2):
        e = 0.5 * math.erfc(-x * 0.7071067811865476) - q
        half = math.exp(0.25 * x * x)  # exp(x^2 / 2) in two halves: only the product may overflow
        u = e * half * 2.5066282746310002 * half
        x = x - u / (1.0 + 0.5 * x * u)
    return -x if upper else x


def sinc(x):
    # sin(pi x) / (pi x), 1 at 0, as PyTorch computes it (NaN at +-inf).
    if x == 0.0:
        return 1.0
    if x == math.inf or x == -math.inf:
        return math.nan
    product = math.pi * x
    return math.sin(product) / product


def entr(x):
    # -x log x, 0 at 0, -inf below 0.
    if x != x:
        return x
    if x > 0.0:
        return -x * math.log(x)
    if x == 0.0:
        return 0.0 * x
    return -math.inf



def floor(a):
    return np.floor(a)


def ceil(a):
    return np.ceil(a)


def round(a):  # noqa: A001
    # Half to even, like torch.round.
    return np.rint(a)


def trunc(a):
    return np.trunc(a)


def frac(a):
    return a - np.trunc(a)


def isnan(a):
    return a != a


def isinf(a):
    return a == math.inf or a == -math.inf


def isfinite(a):
    return not (a != a or a == math.inf or a == -math.inf)


def logical_not(a):
    return a == 0


def bitwise_not(a):
    return ~a


def relu(a):
    # PyTorch's clamp_min(a, 0): negatives (-inf too) give +0, while NaN and -0. pass through.
    return 0 if a < 0 else a


def relu_backward(grad, result):
    # PyTorch's threshold_backward at 0: no gradient where the result is <= 0 (NaN passes).
    return 0 if result <= 0 else grad


_ZETA_EULER_MACLAURIN = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
                         7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14,
                         -4.5979787224074726105e15, 1.8152105401943546773e17, -7.1661652561756670113e18)


def zeta(x, q):
    # Hurwitz zeta sum_k (k + q)^-x, Cephes' way (as PyTorch): the terms up to q + 9, then
    # the Euler-Maclaurin tail.
    if x == 1.0:
        return math.inf
    if x < 1.0:
        return math.nan
    if q <= 0.0:
        if q == math.floor(q):
            return math.inf
        if x != math.floor(x):
            return math.nan
    s = math.pow(q, -x)
    a = q
    i = 0
    b = 0.0
    while i < 9 or a <= 9.0:
        i += 1
        a += 1.0
        b = math.pow(a, -x)
        s += b
        if -1.1102230246251565e-16 * s < b < 1.1102230246251565e-16 * s:
            return s
    w = a
    s += b * w / (x - 1.0)
    s -= 0.5 * b
    a = 1.0
    k = 0.0
    for j in range(12):
        a *= x + k
        b /= w
        t = a * b / _ZETA_EULER_MACLAURIN[j]
        s = s + t
        if -1.1102230246251565e-16 * s < t < 1.1102230246251565e-16 * s:
            return s
        k += 1.0
        a *= x + k
        b /= w
        k += 1.0
    return s


@register_jitable
def _incomplete_gamma(a, x, upper):
    # Regularized incomplete gamma P(a, x) (Q(a, x) if upper): its power series below
    # x = a + 1, Legendre's continued fraction for Q above (Lentz's method).
    prefactor = math.exp(a * math.log(x) - x - math.lgamma(a))
    if x < a + 1.0:
        term = 1.0 / a
        total = term
        ap = a
        for _ in range(5000):
            ap += 1.0
            term *= x / ap
            total += term
            if term < 1e-17 * total:
                break
        lower = total * prefactor
        return 1.0 - lower if upper else lower
    tiny = 1e-300
    b = x + 1.0 - a
    c = 1.0 / tiny
    d = 1.0 / b
    h = d
    for i in range(1, 5000):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        if -tiny < d < tiny:
            d = tiny
        c = b + an / c
        if -tiny < c < tiny:
            c = tiny
        d = 1.0 / d
        delta = d * c
        h *= delta
        if -1e-16 < delta - 1.0 < 1e-16:
            break
    q = h * prefactor
    return q if upper else 1.0 - q


def igamma(a, x):
    # PyTorch's (Cephes') values off the interior: NaN for negative or NaN arguments.
    if a != a or x != x or a < 0.0 or x < 0.0:
        return math.nan
    if a == 0.0:
        return 1.0 if x > 0.0 else math.nan
    if x == 0.0:
        return 0.0
    if a == math.inf:
        return math.nan if x == math.inf else 0.0
    if x == math.inf:
        return 1.0
    return _incomplete_gamma(a, x, False)


def igammac(a, x):
    if a != a or x != x or a < 0.0 or x < 0.0:
        return math.nan
    if a == 0.0:
        return 0.0 if x > 0.0 else math.nan
    if x == 0.0:
        return 1.0
    if a == math.inf:
        return math.nan if x == math.inf else 1.0
    if x == math.inf:
        return 0.0
    return _incomplete_gamma(a, x, True)


# --- ternary ---------------------------------------------------------------------------


def where(c, a, b):
    return a if c else b


def lerp(start, end, weight):
    # PyTorch's formula: stable at both ends of the weight range.
    if -0.5 < weight < 0.5:  # not abs(): this module defines its own abs
        return start + weight * (end - start)
    return end - (end - start) * (1 - weight)


UNARY = (
    "copy", "neg", "abs", "sign", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p",
    "sqrt", "rsqrt", "square", "reciprocal", "sin", "cos", "tan", "asin", "acos", "atan",
    "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "sigmoid", "logit", "erf", "erfc",
    "erfinv", "lgamma", "digamma", "floor", "ceil", "round", "trunc", "frac", "isnan",
    "isinf", "isfinite", "logical_not", "bitwise_not", "relu",
    "i0", "i0e", "i1", "i1e", "erfcx", "log_ndtr", "ndtri", "sinc", "entr",
)
BINARY = (
    "add", "sub", "mul", "div", "div_trunc", "floor_divide", "floor_divide_float", "remainder",
    "remainder_float", "fmod", "fmod_int", "pow",
    "pow_int", "atan2", "hypot",
    "copysign", "maximum", "minimum", "fmax", "fmin", "eq", "ne", "lt", "le", "gt", "ge",
    "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor",
    "bitwise_left_shift", "bitwise_right_shift", "gcd", "lcm", "zeta", "igamma", "igammac",
)
TERNARY = ("where", "lerp")
