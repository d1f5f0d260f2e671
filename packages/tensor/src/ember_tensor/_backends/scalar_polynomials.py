"""Scalar kernels of torch.special's orthogonal polynomials P_n(x): Chebyshev T, U, V, W
(and their shifted forms on [0, 1]), Hermite H and He, Laguerre L and Legendre P.

Each takes (x, n) in the same float dtype, with PyTorch's rules: n is truncated to an
integer (C's cast), a negative n gives 0, and NaN or an n past int64's range (where C's
cast gives INT64_MIN) gives 0 too. The values come from the three-term recurrences; for
|x| < 1 and a larger n the Chebyshev families use their trigonometric forms
(T_n(cos t) = cos(n t), ...) as PyTorch does, which keep full precision there.
"""
import math

from numba.extending import register_jitable

_INT64_LIMIT = 9.223372036854775807e18


@register_jitable
def _degree(n):
    # C's static_cast<int64_t>(n): truncation; out of range and NaN (INT64_MIN) read as -1.
    if n > -1.0 and n < _INT64_LIMIT:
        return int(n)
    return -1


@register_jitable
def _chebyshev(x, n, kind):
    # kind 0..3: T, U, V, W. Each starts from 1 and its own first-degree polynomial, then
    # follows p_{k+1} = 2 x p_k - p_{k-1}.
    m = _degree(n)
    if m < 0:
        return 0.0
    if x == 1.0 or x == -1.0:  # the closed forms at the ends of [-1, 1]
        odd = m % 2 == 1
        if kind == 0:
            return -1.0 if (x < 0.0 and odd) else 1.0
        if kind == 1:
            return -(m + 1.0) if (x < 0.0 and odd) else m + 1.0
        if kind == 2:
            if x > 0.0:
                return 1.0
            return -(2.0 * m + 1.0) if odd else 2.0 * m + 1.0
        if x > 0.0:
            return 2.0 * m + 1.0
        return -1.0 if odd else 1.0
    if m > (6 if kind == 0 else 8) and -1.0 < x < 1.0:
        theta = math.acos(x)
        if kind == 0:
            return math.cos(m * theta)
        if kind == 1:
            s = math.sin(theta)
            return math.sin((m + 1) * theta) / s
        if kind == 2:
            return math.cos((m + 0.5) * theta) / math.cos(0.5 * theta)
        return math.sin((m + 0.5) * theta) / math.sin(0.5 * theta)
    if m == 0:
        return 1.0
    if kind == 0:
        q = x
    elif kind == 1:
        q = x + x
    elif kind == 2:
        q = x + x - 1.0
    else:
        q = x + x + 1.0
    p = 1.0
    for _ in range(2, m + 1):
        r = (x + x) * q - p
        p = q
        q = r
    return q


def chebyshev_polynomial_t(x, n):
    return _chebyshev(x, n, 0)


def chebyshev_polynomial_u(x, n):
    return _chebyshev(x, n, 1)


def chebyshev_polynomial_v(x, n):
    return _chebyshev(x, n, 2)


def chebyshev_polynomial_w(x, n):
    return _chebyshev(x, n, 3)


def shifted_chebyshev_polynomial_t(x, n):
    return _chebyshev(x + x - 1.0, n, 0)


def shifted_chebyshev_polynomial_u(x, n):
    return _chebyshev(x + x - 1.0, n, 1)


def shifted_chebyshev_polynomial_v(x, n):
    return _chebyshev(x + x - 1.0, n, 2)


def shifted_chebyshev_polynomial_w(x, n):
    return _chebyshev(x + x - 1.0, n, 3)


def hermite_polynomial_h(x, n):
    # Physicists': H_{k+1} = 2x H_k - 2k H_{k-1}.
    m = _degree(n)
    if m < 0:
        return 0.0
    if m == 0:
        return 1.0
    p = 1.0
    q = x + x
    for k in range(1, m):
        r = (x + x) * q - 2.0 * k * p
        p = q
        q = r
    return q


def hermite_polynomial_he(x, n):
    # Probabilists': He_{k+1} = x He_k - k He_{k-1}.
    m = _degree(n)
    if m < 0:
        return 0.0
    if m == 0:
        return 1.0
    p = 1.0
    q = 1.0 * x
    for k in range(1, m):
        r = x * q - k * p
        p = q
        q = r
    return q


def laguerre_polynomial_l(x, n):
    # (k + 1) L_{k+1} = (2k + 1 - x) L_k - k L_{k-1}; L_n(0) = 1.
    m = _degree(n)
    if m < 0:
        return 0.0
    if m == 0 or x == 0.0:
        return 1.0
    p = 1.0
    q = 1.0 - x
    for k in range(1, m):
        r = ((2.0 * k + 1.0 - x) * q - k * p) / (k + 1.0)
        p = q
        q = r
    return q


def legendre_polynomial_p(x, n):
    # (k + 1) P_{k+1} = (2k + 1) x P_k - k P_{k-1}; P_n(+-1) = (+-1)^n.
    m = _degree(n)
    if m < 0:
        return 0.0
    if x == 1.0 or x == -1.0:
        return -1.0 if (x < 0.0 and m % 2 == 1) else 1.0
    if m == 0:
        return 1.0
    p = 1.0
    q = 1.0 * x
    for k in range(1, m):
        r = ((2.0 * k + 1.0) * x * q - k * p) / (k + 1.0)
        p = q
        q = r
    return q


BINARY = ("chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
          "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
          "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
          "laguerre_polynomial_l", "legendre_polynomial_p")
