"""Elementwise special functions (``torch.special``'s kernels): modified Bessel functions,
the scaled complementary error function, the normal distribution's log-CDF and inverse,
sinc, entropy, Hurwitz zeta and the regularized incomplete gamma functions.

Each runs one scalar kernel of `_backends/scalar.py` with PyTorch's dtype rule: integer
and bool inputs compute in the default float dtype. The ops PyTorch names at the top level
(``i0``, ``sinc``, ``igamma``, ``igammac`` and their in-place forms) are exported here; the
``special_*`` ops are reached through ``ember_tensor.special``.
"""
import math

from ... import _dtype as D
from ..._dispatch import op
from .. import _iter
from ..._tensor import Tensor
from .arithmetic import _FLOAT, _not_implemented, add, binary, mul, require_tensors, unary
from .pointwise import digamma, lgamma

# polygamma takes n first, so its Tensor method (self is the input) is set in _ops/methods.py.
__all__ = ["i0", "i0_", "sinc", "sinc_", "igamma", "igamma_", "igammac", "igammac_", "mvlgamma", "mvlgamma_",
           "polygamma_"]


def _unary_special(op_name, kernel, doc):
    def fn(input, *, out=None):
        return unary(kernel, input, out, _FLOAT)
    fn.__name__, fn.__doc__ = op_name, doc
    return op(op_name)(fn)


def _unary_special_inplace(op_name, kernel):
    def fn(self):
        return unary(kernel, self, None, _FLOAT, inplace=True)
    fn.__name__, fn.__doc__ = op_name, f"In-place `{kernel}`."
    return op(op_name, inplace=True)(fn)


def _binary_special(op_name, kernel, doc, tensors_only=True):
    def fn(input, other, *, out=None):
        if tensors_only:
            require_tensors(op_name, input, other)
        return binary(kernel, input, other, out, rule=_FLOAT)
    fn.__name__, fn.__doc__ = op_name, doc
    return op(op_name)(fn)


def _binary_special_inplace(op_name, kernel):
    def fn(self, other):
        require_tensors(op_name, self, other)
        return binary(kernel, self, other, rule=_FLOAT, inplace=True)
    fn.__name__, fn.__doc__ = op_name, f"In-place `{kernel}`."
    return op(op_name, inplace=True)(fn)


i0 = _unary_special("i0", "i0", "Modified Bessel function of the first kind, order 0.")
i0_ = _unary_special_inplace("i0_", "i0")
sinc = _unary_special("sinc", "sinc", "Normalized sinc: sin(pi x) / (pi x), and 1 at 0.")
sinc_ = _unary_special_inplace("sinc_", "sinc")
special_i0e = _unary_special("special_i0e", "i0e", "Exponentially scaled i0: exp(-|x|) i0(x).")
special_i1 = _unary_special("special_i1", "i1", "Modified Bessel function of the first kind, order 1.")
special_i1e = _unary_special("special_i1e", "i1e", "Exponentially scaled i1: exp(-|x|) i1(x).")
special_erfcx = _unary_special("special_erfcx", "erfcx", "Scaled complementary error function exp(x^2) erfc(x).")
special_ndtri = _unary_special("special_ndtri", "ndtri", "The inverse of the standard normal CDF.")
special_log_ndtr = _unary_special("special_log_ndtr", "log_ndtr", "Log of the standard normal CDF.")
special_entr = _unary_special("special_entr", "entr", "Elementwise entropy -x log x (0 at 0, -inf below 0).")

igamma = _binary_special("igamma", "igamma", "Regularized lower incomplete gamma P(input, other).")
igamma_ = _binary_special_inplace("igamma_", "igamma")
igammac = _binary_special("igammac", "igammac", "Regularized upper incomplete gamma Q(input, other).")
igammac_ = _binary_special_inplace("igammac_", "igammac")
special_zeta = _binary_special("special_zeta", "zeta", "Hurwitz zeta function sum_k (k + other)^-input.",
                               tensors_only=False)  # zeta has Scalar overloads


@op()
def polygamma(n, input, *, out=None):
    """The `n`-th derivative of digamma: digamma for n = 0, else
    (-1)^(n+1) n! zeta(n + 1, input).

    >>> import ember_tensor as torch
    >>> round(torch.polygamma(1, torch.tensor([1.0])).item(), 6)  # pi^2 / 6
    1.644934
    """
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    if n == 0:
        return digamma(input, out=out)
    scale = (-1.0) ** (n + 1) * math.factorial(n)
    return mul(special_zeta(float(n + 1), input), scale, out=out)


@op("polygamma_", inplace=True)
def polygamma_(self, n):
    """In-place `polygamma` (Tensor.polygamma_(n))."""
    if self._dtype.category != D._FLOAT:
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{_iter.type_name(self._dtype)}")
    return self.copy_(polygamma(n, self))


def _check_mvlgamma(input, p):
    # PyTorch 2.13 no longer checks input > (p-1)/2: lgamma's poles give inf/NaN there.
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")


@op()
def mvlgamma(input, p, *, out=None):
    """Log of the multivariate gamma function of dimension `p`:
    p(p-1)/4 log(pi) + sum_{j<p} lgamma(input - j/2).

    >>> import ember_tensor as torch
    >>> round(torch.mvlgamma(torch.tensor([2.5]), 1).item(), 6)  # lgamma(2.5)
    0.284683
    """
    _check_mvlgamma(input, p)
    x = input if input._dtype.category == D._FLOAT else input.to(D.get_default_dtype())
    total = lgamma(x)
    for j in range(1, p):
        total = total + lgamma(x - j / 2)
    return add(total, p * (p - 1) / 4 * math.log(math.pi), out=out)


@op("mvlgamma_", inplace=True)
def mvlgamma_(self, p):
    """In-place `mvlgamma`."""
    if self._dtype.category != D._FLOAT:
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{_iter.type_name(self._dtype)}")
    return self.copy_(mvlgamma(self, p))


# --- Bessel functions and orthogonal polynomials (`_backends/scalar_bessel.py`,
# `_backends/scalar_polynomials.py`). PyTorch dispatches them for float32/float64 only
# (integer and bool inputs compute in the default float dtype), and records no gradient.

def _check_special_dtype(kernel, *operands):
    for x in operands:
        if isinstance(x, Tensor) and (x._dtype in (D.float16, D.bfloat16) or x._dtype.category == D._COMPLEX):
            raise _not_implemented(f"{kernel}_cpu", x._dtype, *operands)


def _bessel(op_name, kernel, doc):
    name = op_name.removeprefix("special_")

    def fn(input, *, out=None):
        if isinstance(input, Tensor):
            _check_special_dtype(name, input)
        return unary(kernel, input, out, _FLOAT)
    fn.__name__, fn.__doc__ = op_name, doc
    return op(op_name)(fn)


def _polynomial(op_name, doc):
    name = op_name.removeprefix("special_")

    def fn(input, n, *, out=None):
        if not isinstance(input, Tensor) and not isinstance(n, Tensor):
            raise TypeError(f"{op_name}() received an invalid combination of arguments - got "
                            f"({type(input).__name__}, {type(n).__name__}), but expected one of:\n"
                            " * (Tensor x, Tensor n, *, Tensor out = None)\n"
                            " * (Number x, Tensor n, *, Tensor out = None)\n"
                            " * (Tensor x, Number n, *, Tensor out = None)")
        _check_special_dtype(name, input, n)
        return binary(name, input, n, out, rule=_FLOAT)
    fn.__name__, fn.__doc__ = op_name, doc
    return op(op_name)(fn)


special_bessel_j0 = _bessel("special_bessel_j0", "bessel_j0", "Bessel function of the first kind, order 0.")
special_bessel_j1 = _bessel("special_bessel_j1", "bessel_j1", "Bessel function of the first kind, order 1.")
special_bessel_y0 = _bessel("special_bessel_y0", "bessel_y0", "Bessel function of the second kind, order 0.")
special_bessel_y1 = _bessel("special_bessel_y1", "bessel_y1", "Bessel function of the second kind, order 1.")
special_modified_bessel_i0 = _bessel("special_modified_bessel_i0", "i0",
                                     "Modified Bessel function of the first kind, order 0.")
special_modified_bessel_i1 = _bessel("special_modified_bessel_i1", "i1",
                                     "Modified Bessel function of the first kind, order 1.")
special_modified_bessel_k0 = _bessel("special_modified_bessel_k0", "modified_bessel_k0",
                                     "Modified Bessel function of the second kind, order 0.")
special_modified_bessel_k1 = _bessel("special_modified_bessel_k1", "modified_bessel_k1",
                                     "Modified Bessel function of the second kind, order 1.")
special_scaled_modified_bessel_k0 = _bessel("special_scaled_modified_bessel_k0", "scaled_modified_bessel_k0",
                                            "Exponentially scaled K0: exp(x) K0(x).")
special_scaled_modified_bessel_k1 = _bessel("special_scaled_modified_bessel_k1", "scaled_modified_bessel_k1",
                                            "Exponentially scaled K1: exp(x) K1(x).")
special_spherical_bessel_j0 = _bessel("special_spherical_bessel_j0", "spherical_bessel_j0",
                                      "Spherical Bessel function of the first kind, order 0: sin(x) / x.")
special_airy_ai = _bessel("special_airy_ai", "airy_ai", "Airy function Ai.")

special_chebyshev_polynomial_t = _polynomial("special_chebyshev_polynomial_t", "Chebyshev polynomial T_n(x).")
special_chebyshev_polynomial_u = _polynomial("special_chebyshev_polynomial_u", "Chebyshev polynomial U_n(x).")
special_chebyshev_polynomial_v = _polynomial("special_chebyshev_polynomial_v", "Chebyshev polynomial V_n(x).")
special_chebyshev_polynomial_w = _polynomial("special_chebyshev_polynomial_w", "Chebyshev polynomial W_n(x).")
special_shifted_chebyshev_polynomial_t = _polynomial("special_shifted_chebyshev_polynomial_t",
                                                     "Shifted Chebyshev polynomial T*_n(x) = T_n(2x - 1).")
special_shifted_chebyshev_polynomial_u = _polynomial("special_shifted_chebyshev_polynomial_u",
                                                     "Shifted Chebyshev polynomial U*_n(x) = U_n(2x - 1).")
special_shifted_chebyshev_polynomial_v = _polynomial("special_shifted_chebyshev_polynomial_v",
                                                     "Shifted Chebyshev polynomial V*_n(x) = V_n(2x - 1).")
special_shifted_chebyshev_polynomial_w = _polynomial("special_shifted_chebyshev_polynomial_w",
                                                     "Shifted Chebyshev polynomial W*_n(x) = W_n(2x - 1).")
special_hermite_polynomial_h = _polynomial("special_hermite_polynomial_h", "Physicists' Hermite polynomial H_n(x).")
special_hermite_polynomial_he = _polynomial("special_hermite_polynomial_he",
                                            "Probabilists' Hermite polynomial He_n(x).")
special_laguerre_polynomial_l = _polynomial("special_laguerre_polynomial_l", "Laguerre polynomial L_n(x).")
special_legendre_polynomial_p = _polynomial("special_legendre_polynomial_p", "Legendre polynomial P_n(x).")
