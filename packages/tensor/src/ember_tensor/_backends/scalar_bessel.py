"""Scalar kernels of torch.special's Bessel family: J0, J1, Y0, Y1 (bessel_*), K0, K1 and
their exponentially scaled forms (modified_bessel_k*, scaled_modified_bessel_k*),
spherical_bessel_j0 and airy_ai.

The same source compiles for the CPU (inlined into Numba loops) and for CUDA (device
functions), as `scalar.py`'s kernels do; the CUDA simulator runs it as plain Python, where
`math` raises on overflow, log(0) and sin(inf), so the special values are returned before
any such call. Each kernel computes in float64 (`np.float64(x)`): float32 would
otherwise stay float32 (under Numba and the simulator), where the series lose digits. The methods
are chosen for full float64 accuracy with no tables:

- J0, J1, Y0, Y1: power series for |x| < 2; Miller's backward recurrence up to 25, which
  also gives Neumann's series for Y0 and Y1 (A&S 9.1.88 and its derivative); Hankel's
  asymptotic series above 25.
- K0, K1: power series for x <= 2; above, the trapezoidal rule on
  exp(x) K_nu(x) = int_0^inf exp(-x (cosh t - 1)) cosh(nu t) dt, which converges
  exponentially for a smooth, doubly-exponentially decaying integrand.
- airy_ai: its Maclaurin series on [-7.5, 1]; above 1, Ai(x) = sqrt(x/3) K_{1/3}(zeta) / pi
  with zeta = 2/3 x^{3/2} by the same trapezoidal rule; below -7.5, the asymptotic series.

Edge values follow PyTorch's: J and Y give NaN at +-inf (PyTorch's asymptotic formulas
evaluate sin(inf) there), Y and K give -inf / inf at 0 and NaN below 0.
"""
import math

import numpy as np

from numba.extending import register_jitable

_EULER_GAMMA = 0.5772156649015329
_TWO_OVER_PI = 0.6366197723675814
_SQRT_HALF = 0.7071067811865476

# --- J and Y, orders 0 and 1 ---------------------------------------------------------------


@register_jitable
def _jy_series(x, order, want_y):
    # J_order(x), or Y_order(x) if want_y, by the power series in (x/2)^2 (0 < x < 2).
    y = 0.25 * x * x
    if order == 0:
        term = 1.0
        j = 1.0
        harmonic = 0.0
        s = 0.0
        for k in range(1, 30):
            term = -term * y / (k * k)
            harmonic += 1.0 / k
            j += term
            s -= term * harmonic  # the sum of (-1)^(k+1) H_k y^k / (k!)^2
            if -1e-18 < term < 1e-18:
                break
        if not want_y:
            return j
        return _TWO_OVER_PI * ((math.log(0.5 * x) + _EULER_GAMMA) * j + s)
    half = 0.5 * x
    term = half
    j = half
    psi = 1.0 - 2.0 * _EULER_GAMMA  # psi(k+1) + psi(k+2) at k = 0
    s = psi * half
    for k in range(1, 30):
        term = -term * y / (k * (k + 1))
        psi += 1.0 / k + 1.0 / (k + 1)
        j += term
        s += term * psi
        if -1e-18 * half < term < 1e-18 * half:
            break
    if not want_y:
        return j
    return -_TWO_OVER_PI / x + _TWO_OVER_PI * math.log(half) * j - s / math.pi


@register_jitable
def _jy_recurrence(x, order, want_y):
    # Miller's backward recurrence J_{k-1} = (2k / x) J_k - J_{k+1} from far above x,
    # normalised by 1 = J0 + 2 (J2 + J4 + ...); along the way it sums Neumann's series
    # s0 = sum_k (-1)^k J_2k / k and s1 = sum_k (-1)^k (J_{2k-1} - J_{2k+1}) / k.
    top = 2 * ((int(x) + 36) // 2)
    above = 0.0
    current = 1e-30
    norm = 0.0
    s0 = 0.0
    s1 = 0.0
    j1 = 0.0
    for k in range(top, 0, -1):
        below = (2.0 * k / x) * current - above
        above = current
        current = below
        m = k - 1  # current is J_m
        if m > 0 and m % 2 == 0:
            half = m // 2
            norm += 2.0 * current
            s0 += current / half if half % 2 == 0 else -current / half
        elif m % 2 == 1:
            half = m // 2  # m = 2 half + 1
            weight = 1.0 / (half + 1) + (1.0 / half if half > 0 else 0.0)
            s1 += -weight * current if half % 2 == 0 else weight * current
            if m == 1:
                j1 = current
    norm += current
    j0 = current / norm
    j1 = j1 / norm
    if not want_y:
        return j0 if order == 0 else j1
    log_term = math.log(0.5 * x) + _EULER_GAMMA
    if order == 0:
        return _TWO_OVER_PI * (log_term * j0 - 2.0 * s0 / norm)
    return _TWO_OVER_PI * (log_term * j1 - j0 / x + s1 / norm)


@register_jitable
def _jy_asymptotic(x, order, want_y):
    # Hankel's expansion: sqrt(2 / (pi x)) (P cos(chi) - Q sin(chi)) for J and
    # (P sin(chi) + Q cos(chi)) for Y, chi = x - (order / 2 + 1/4) pi. cos(chi) and sin(chi)
    # are written with cos(x) and sin(x), which reduce x exactly.
    mu = 4.0 * order * order
    p = 1.0
    q = 0.0
    term = 1.0
    for k in range(1, 40):
        odd = 2.0 * k - 1.0
        next_term = term * (mu - odd * odd) / (8.0 * k * x)
        if (next_term if next_term > 0 else -next_term) > (term if term > 0 else -term):
            break  # the series has started to diverge
        term = next_term
        if k % 4 == 1:
            q += term
        elif k % 4 == 2:
            p -= term
        elif k % 4 == 3:
            q -= term
        else:
            p += term
        if -1e-17 < term < 1e-17:
            break
    c = math.cos(x)
    s = math.sin(x)
    if order == 0:
        cos_chi = (c + s) * _SQRT_HALF
        sin_chi = (s - c) * _SQRT_HALF
    else:
        cos_chi = (s - c) * _SQRT_HALF
        sin_chi = -(s + c) * _SQRT_HALF
    scale = math.sqrt(_TWO_OVER_PI / x)
    if want_y:
        return scale * (p * sin_chi + q * cos_chi)
    return scale * (p * cos_chi - q * sin_chi)


@register_jitable
def _jy(x, order, want_y):
    # x > 0 and finite.
    if x < 2.0:
        return _jy_series(x, order, want_y)
    if x <= 25.0:
        return _jy_recurrence(x, order, want_y)
    return _jy_asymptotic(x, order, want_y)


def bessel_j0(value):
    x = np.float64(value)  # float() and a reassigned argument would stay float32 in Numba
    if x != x or x == math.inf or x == -math.inf:
        return math.nan
    if x == 0.0:
        return 1.0
    return _jy(x if x > 0.0 else -x, 0, False)


def bessel_j1(value):
    x = np.float64(value)  # float() and a reassigned argument would stay float32 in Numba
    if x != x or x == math.inf or x == -math.inf:
        return math.nan
    if x == 0.0:
        return x  # keeps the sign of -0.0
    if x < 0.0:
        return -_jy(-x, 1, False)
    return _jy(x, 1, False)


def bessel_y0(value):
    x = np.float64(value)  # float() and a reassigned argument would stay float32 in Numba
    if x != x or x < 0.0 or x == math.inf:
        return math.nan
    if x == 0.0:
        return -math.inf
    return _jy(x, 0, True)


def bessel_y1(value):
    x = np.float64(value)  # float() and a reassigned argument would stay float32 in Numba
    if x != x or x < 0.0 or x == math.inf:
        return math.nan
    if x == 0.0:
        return -math.inf
    if x < 1e-300:
        return -math.inf  # -2 / (pi x) overflows
    return _jy(x, 1, True)


def spherical_bessel_j0(value):
    x = np.float64(value)  # float() and a reassigned argument would stay float32 in Numba
    # sin(x) / x, by its series near 0 where the quotient loses digits.
    if x != x:
        return x
    if x == math.inf or x == -math.inf:
        return 0.0
    if -0.5 < x < 0.5:
        y = x * x
        term = 1.0
        total = 1.0
        for k in range(1, 12):
            term = -term * y / ((2 * k) * (2 * k + 1))
            total += term
        return total
    return math.sin(x) / x


# --- K, orders 0 and 1, and Airy's Ai ---------------------------------------------------


@register_jitable
def _k_series(x, order):
    # K_order(x) for 0 < x <= 2 by its power series (A&S 9.6.13 and 9.6.11).
    y = 0.25 * x * x
    log_half = math.log(0.5 * x)
    if order == 0:
        term = 1.0
        i0 = 1.0
        harmonic = 0.0
        s = 0.0
        for k in range(1, 30):
            term = term * y / (k * k)
            harmonic += 1.0 / k
            i0 += term
            s += term * harmonic
            if term < 1e-18 * i0:
                break
        return -(log_half + _EULER_GAMMA) * i0 + s
    half = 0.5 * x
    term = half
    i1 = half
    psi = 1.0 - 2.0 * _EULER_GAMMA
    s = psi * half
    for k in range(1, 30):
        term = term * y / (k * (k + 1))
        psi += 1.0 / k + 1.0 / (k + 1)
        i1 += term
        s += term * psi
        if term < 1e-18 * i1:
            break
    return 1.0 / x + log_half * i1 - 0.5 * s


@register_jitable
def _k_scaled_integral(x, nu):
    # exp(x) K_nu(x) by the trapezoidal rule on int_0^inf exp(-x (cosh t - 1)) cosh(nu t) dt.
    # The step keeps the error below 1e-17: it must shrink like 1 / sqrt(x) for large x,
    # where the integrand is a narrowing Gaussian.
    h = 0.6 / math.sqrt(x)
    if h > 0.2:
        h = 0.2
    total = 0.5
    for j in range(1, 2000):
        t = j * h
        sh = math.sinh(0.5 * t)
        exponent = 2.0 * x * sh * sh  # x (cosh t - 1) without cancellation
        if exponent > 700.0:
            break
        term = math.exp(-exponent) * math.cosh(nu * t)
        total += term
        if term < 1e-18 * total:
            break
    return h * total


@register_jitable
def _k(value, order, scaled):
    # K_order(value), times exp(value) if scaled.
    x = np.float64(value)
    if x != x or x < 0.0:
        return math.nan
    if x == 0.0:
        return math.inf
    if x == math.inf:
        return 0.0
    if x <= 2.0:
        value = _k_series(x, order)
        return value * math.exp(x) if scaled else value
    value = _k_scaled_integral(x, 1.0 * order)
    if scaled:
        return value
    if x > 750.0:
        return 0.0  # exp(-x) underflows
    return value * math.exp(-x)


def modified_bessel_k0(x):
    return _k(x, 0, False)


def modified_bessel_k1(x):
    return _k(x, 1, False)


def scaled_modified_bessel_k0(x):
    return _k(x, 0, True)


def scaled_modified_bessel_k1(x):
    return _k(x, 1, True)


_AI0 = 0.3550280538878172  # Ai(0)
_AIP0 = 0.2588194037928068  # -Ai'(0)


def airy_ai(value):
    x = np.float64(value)  # float() and a reassigned argument would stay float32 in Numba
    if x != x or x == math.inf or x == -math.inf:
        return math.nan  # PyTorch's value at +-inf
    if x > 105.0:
        return 0.0  # Ai(x) < 1e-300 (exp(-zeta) underflows)
    if x > 1.0:
        zeta = 2.0 / 3.0 * x * math.sqrt(x)
        return math.sqrt(x / 3.0) / math.pi * _k_scaled_integral(zeta, 1.0 / 3.0) * math.exp(-zeta)
    if x >= -7.5:
        cube = x * x * x
        f_term = 1.0
        f = 1.0
        g_term = x
        g = x
        for k in range(1, 80):
            f_term = f_term * cube / ((3 * k - 1) * (3 * k))
            g_term = g_term * cube / ((3 * k) * (3 * k + 1))
            f += f_term
            g += g_term
            if -1e-18 < f_term < 1e-18 and -1e-18 < g_term < 1e-18:
                break
        return _AI0 * f - _AIP0 * g
    z = -x
    zeta = 2.0 / 3.0 * z * math.sqrt(z)
    if zeta == math.inf:
        return math.nan  # the phase is lost, as in PyTorch
    u = 1.0
    p = 1.0
    q = 0.0
    power = 1.0
    for k in range(1, 30):
        u = u * (6 * k - 5) * (6 * k - 3) * (6 * k - 1) / ((2 * k - 1) * 216.0 * k)
        power = power / zeta
        term = u * power
        if k % 4 == 1:
            q += term
        elif k % 4 == 2:
            p -= term
        elif k % 4 == 3:
            q -= term
        else:
            p += term
        if term < 1e-17:
            break
    # sin(zeta + pi/4) and cos(zeta + pi/4) from sin(zeta) and cos(zeta).
    s = math.sin(zeta)
    c = math.cos(zeta)
    sin_phase = (s + c) * _SQRT_HALF
    cos_phase = (c - s) * _SQRT_HALF
    return (sin_phase * p - cos_phase * q) / (math.sqrt(math.pi) * math.sqrt(math.sqrt(z)))


UNARY = ("bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_k0", "modified_bessel_k1",
         "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "spherical_bessel_j0", "airy_ai")
