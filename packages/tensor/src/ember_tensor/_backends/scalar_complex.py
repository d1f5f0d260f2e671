"""Scalar functions of complex numbers that elementwise kernels apply to each element.

The twins of `scalar.py`'s functions for complex64/complex128 operands, where the real
version cannot serve (it calls `math`, or orders its operand). Each is named
``<op>_complex``; the op layer picks it when the operands are complex, and the loop
generators give these their own modules, so that no real kernel compiles more because
they exist. Ops whose real version is already right for complex numbers (add, mul, neg,
eq, pow, ...) use it as is: Numba compiles their complex signature only when it is met.

NumPy's ufuncs on complex scalars are what Numba compiles on the CPU, and what the CUDA
simulator (plain Python on NumPy scalars) runs without raising at poles; they follow C99's
special values, as PyTorch does.
"""
import math

import numpy as np
from numba.extending import register_jitable

# --- arithmetic ------------------------------------------------------------------------


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


def exp_complex(a):
    return np.exp(a)


def exp2_complex(a):
    return np.exp(a * 0.6931471805599453)


def expm1_complex(a):
    # exp(x)(cos y - 1) + (exp(x) - 1) + i exp(x) sin y, accurate near 0 in both parts.
    x, y = a.real, a.imag
    ex = np.exp(x)
    s = np.sin(y / 2.0)
    return complex(np.expm1(x) - 2.0 * ex * s * s, ex * np.sin(y))


def log_complex(a):
    return np.log(a)


def log2_complex(a):
    return np.log(a) * 1.4426950408889634


def log10_complex(a):
    return np.log10(a)


def log1p_complex(a):
    return np.log(a + 1.0)


def sqrt_complex(a):
    return np.sqrt(a)


def rsqrt_complex(a):
    return _divide(1.0 + 0j, np.sqrt(a))


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


def sigmoid_complex(a):
    return _divide(1.0 + 0j, 1.0 + np.exp(-a))
