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
from .arithmetic import _FLOAT, add, binary, mul, require_tensors, unary
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
