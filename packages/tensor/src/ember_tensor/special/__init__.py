"""``ember_tensor.special``: PyTorch's ``torch.special`` namespace.

Integer and bool inputs compute in the default float dtype, as PyTorch's. The new
elementwise functions are scalar kernels (`_backends/scalar.py`, CPU and CUDA): i0, i0e,
i1, i1e, erfcx, ndtri, log_ndtr, sinc, entr, zeta, gammainc/gammaincc; the Bessel
functions and airy_ai (`_backends/scalar_bessel.py`) and the orthogonal polynomials
(`_backends/scalar_polynomials.py`, each taking (x, n)) too; the others are
ember's existing ops under their ``special`` names, or compositions of them (ndtr,
xlog1py, polygamma, multigammaln).

>>> import ember_tensor as torch
>>> torch.special.ndtr(torch.tensor([0.0])).tolist()
[0.5]
>>> torch.special.entr(torch.tensor([0.0, 1.0])).tolist()
[0.0, -0.0]
"""
import math

from .._ops.elementwise import (
    copy_to_out, digamma, erf, erfc, erfinv, exp2, expm1, igamma, igammac, i0, isnan, lgamma, log1p, logit,
    mul, mvlgamma, polygamma, round, sigmoid, sinc, where, xlogy,
)
from .._ops.elementwise.logs_powers import _operands, _to_out
from .._ops.elementwise.special import (
    special_entr, special_erfcx, special_i0e, special_i1, special_i1e, special_log_ndtr, special_ndtri,
    special_zeta, special_airy_ai, special_bessel_j0, special_bessel_j1, special_bessel_y0, special_bessel_y1,
    special_modified_bessel_i0, special_modified_bessel_i1, special_modified_bessel_k0,
    special_modified_bessel_k1, special_scaled_modified_bessel_k0, special_scaled_modified_bessel_k1,
    special_spherical_bessel_j0, special_chebyshev_polynomial_t, special_chebyshev_polynomial_u,
    special_chebyshev_polynomial_v, special_chebyshev_polynomial_w, special_shifted_chebyshev_polynomial_t,
    special_shifted_chebyshev_polynomial_u, special_shifted_chebyshev_polynomial_v,
    special_shifted_chebyshev_polynomial_w, special_hermite_polynomial_h, special_hermite_polynomial_he,
    special_laguerre_polynomial_l, special_legendre_polynomial_p,
)
from .._ops.nn.activation import log_softmax as _log_softmax, softmax as _softmax
from .._ops.reduction_stats import logsumexp
from .. import _dtype as D

__all__ = ["airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
           "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma", "entr", "erf",
           "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc", "gammaln",
           "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e", "i1", "i1e", "laguerre_polynomial_l",
           "legendre_polynomial_p", "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp", "modified_bessel_i0",
           "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1", "multigammaln", "ndtr", "ndtri",
           "polygamma", "psi", "round", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
           "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
           "shifted_chebyshev_polynomial_w", "sinc", "softmax", "spherical_bessel_j0", "xlog1py", "xlogy", "zeta"]

# The same functions under their special names (each keeps its out=).
expit, gammaln, psi = sigmoid, lgamma, digamma
gammainc, gammaincc = igamma, igammac
i0e, i1, i1e, erfcx = special_i0e, special_i1, special_i1e, special_erfcx
ndtri, log_ndtr, entr, zeta = special_ndtri, special_log_ndtr, special_entr, special_zeta

# The Bessel functions and orthogonal polynomials (float32/float64 kernels; no gradient, as in PyTorch).
airy_ai = special_airy_ai
bessel_j0 = special_bessel_j0
bessel_j1 = special_bessel_j1
bessel_y0 = special_bessel_y0
bessel_y1 = special_bessel_y1
modified_bessel_i0 = special_modified_bessel_i0
modified_bessel_i1 = special_modified_bessel_i1
modified_bessel_k0 = special_modified_bessel_k0
modified_bessel_k1 = special_modified_bessel_k1
scaled_modified_bessel_k0 = special_scaled_modified_bessel_k0
scaled_modified_bessel_k1 = special_scaled_modified_bessel_k1
spherical_bessel_j0 = special_spherical_bessel_j0
chebyshev_polynomial_t = special_chebyshev_polynomial_t
chebyshev_polynomial_u = special_chebyshev_polynomial_u
chebyshev_polynomial_v = special_chebyshev_polynomial_v
chebyshev_polynomial_w = special_chebyshev_polynomial_w
shifted_chebyshev_polynomial_t = special_shifted_chebyshev_polynomial_t
shifted_chebyshev_polynomial_u = special_shifted_chebyshev_polynomial_u
shifted_chebyshev_polynomial_v = special_shifted_chebyshev_polynomial_v
shifted_chebyshev_polynomial_w = special_shifted_chebyshev_polynomial_w
hermite_polynomial_h = special_hermite_polynomial_h
hermite_polynomial_he = special_hermite_polynomial_he
laguerre_polynomial_l = special_laguerre_polynomial_l
legendre_polynomial_p = special_legendre_polynomial_p


def ndtr(input, *, out=None):
    """The standard normal CDF: (1 + erf(x / sqrt(2))) / 2, computed as erfc(-x / sqrt(2)) / 2
    so that the lower tail keeps its relative precision.

    >>> import ember_tensor as torch
    >>> torch.special.ndtr(torch.tensor([-1.0, 0.0])).tolist()
    [0.15865525603294373, 0.5]
    """
    return mul(erfc(mul(input, -math.sqrt(0.5))), 0.5, out=out)


def xlog1py(input, other, *, out=None):
    """``input * log1p(other)``, and 0 where input is 0 (unless other is NaN).

    >>> import ember_tensor as torch
    >>> torch.special.xlog1py(torch.tensor([0., 2.]), torch.tensor([-1., 0.])).tolist()
    [0.0, 0.0]
    """
    result = D.result_type(input, other)
    if result.category != D._FLOAT:
        result = D.get_default_dtype()
    x, y = _operands(input, other, result)
    value = where(x == 0, 0.0, mul(x, log1p(y)))
    return _to_out(where(isnan(y), y, value), out)


def multigammaln(input, p, *, out=None):
    """Log of the multivariate gamma function of dimension `p` (``torch.mvlgamma``).

    >>> import ember_tensor as torch
    >>> print(f"{torch.special.multigammaln(torch.tensor([2.5]), 1).item():.6f}")  # lgamma(2.5)
    0.284683
    """
    return mvlgamma(input, p, out=out)


def softmax(input, dim, *, dtype=None):
    """Softmax along `dim`, computed in `dtype` when given (``torch.softmax``)."""
    return _softmax(input, dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):
    """Log-softmax along `dim`, computed in `dtype` when given (``torch.log_softmax``)."""
    return _log_softmax(input, dim, dtype=dtype)
