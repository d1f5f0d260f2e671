"""Derivatives of the special functions (``torch.special``), PyTorch's derivatives.yaml
formulas written with differentiable ember ops.

PyTorch differentiates zeta, igamma and igammac in their second argument only; so does
ember (the first raises as PyTorch's ``not_implemented``).
"""
import math

import ember_tensor as E
import ember_tensor.special as S

from ._registry import RESULT, composite, derivative, not_differentiable


def _input(input, *args, **kwargs):
    return (input,)


def _input_result(input, *args, **kwargs):
    return (input, RESULT)


def _not_implemented(name):
    raise RuntimeError(f"the derivative for '{name}' is not implemented.")


derivative("i0", "i0_", save=_input)(lambda ctx, grad, x: grad * S.i1(x))
derivative("special_i0e", save=_input_result)(lambda ctx, grad, x, result: grad * (S.i1e(x) - x.sgn() * result))
# d/dx i1 = i0 - i1 / x (1/2 at 0), and for i1e the scaling's -sgn(x) i1e on top.
derivative("special_i1", save=_input_result)(
    lambda ctx, grad, x, result: grad * E.where(x == 0, 0.5, E.i0(x) - result / x))
derivative("special_i1e", save=_input_result)(
    lambda ctx, grad, x, result: grad * E.where(x == 0, 0.5, S.i0e(x) - result * (x.sgn() + 1 / x)))
derivative("special_erfcx", save=_input_result)(
    lambda ctx, grad, x, result: grad * (2 * x * result - 2 / math.sqrt(math.pi)))
derivative("special_ndtri", save=lambda input, **_: (RESULT,))(
    lambda ctx, grad, result: grad * math.sqrt(2 * math.pi) * (result * result / 2).exp())
# pdf / cdf, written with erfcx so that neither underflows in the lower tail.
derivative("special_log_ndtr", save=_input)(
    lambda ctx, grad, x: grad * math.sqrt(2 / math.pi) / S.erfcx(x * -math.sqrt(0.5)))
derivative("sinc", "sinc_", save=_input_result)(
    lambda ctx, grad, x, result: grad * E.where(x == 0, 0.0, ((x * math.pi).cos() - result) / x))
derivative("special_entr", save=_input)(lambda ctx, grad, x: grad * -(1 + x.log()))


def _incomplete_gamma_rule(name, sign):
    @derivative(name, name + "_", inputs=("input", "other"), save=lambda input, other, **_: (input, other))
    def rule(ctx, grad, a, x):
        if ctx.needs_input_grad[0]:
            _not_implemented(f"{name}: input")
        # The regularized gamma density x^(a-1) e^-x / Gamma(a), in logs.
        return None, sign * grad * ((a - 1) * x.log() - x - E.lgamma(a)).exp()
    return rule


_incomplete_gamma_rule("igamma", 1.0)
_incomplete_gamma_rule("igammac", -1.0)


@derivative("special_zeta", inputs=("input", "other"), save=lambda input, other, **_: (input, other))
def special_zeta(ctx, grad, s, q):
    if ctx.needs_input_grad[0]:
        _not_implemented("zeta: input")
    return None, grad * -s * S.zeta(s + 1.0, q)


# polygamma is digamma or a multiple of zeta; mvlgamma a sum of lgammas. Their in-place
# forms overwrite the input they are differentiated at, so they have rules of their own.
composite("polygamma", "mvlgamma")


@derivative("polygamma_", inputs=("self",), save=lambda self, n: (self, n))
def polygamma_(ctx, grad, x, n):
    return grad * E.polygamma(n + 1, x)


@derivative("mvlgamma_", inputs=("self",), save=lambda self, p: (self, p))
def mvlgamma_(ctx, grad, x, p):
    return grad * sum(E.digamma(x - j / 2) for j in range(p))


# PyTorch records no gradient for the Bessel functions, airy_ai and the orthogonal
# polynomials: their outputs never require grad (backward() then fails as in PyTorch).
not_differentiable(
    "special_airy_ai", "special_bessel_j0", "special_bessel_j1", "special_bessel_y0", "special_bessel_y1",
    "special_modified_bessel_i0", "special_modified_bessel_i1", "special_modified_bessel_k0",
    "special_modified_bessel_k1", "special_scaled_modified_bessel_k0", "special_scaled_modified_bessel_k1",
    "special_spherical_bessel_j0", "special_chebyshev_polynomial_t", "special_chebyshev_polynomial_u",
    "special_chebyshev_polynomial_v", "special_chebyshev_polynomial_w", "special_shifted_chebyshev_polynomial_t",
    "special_shifted_chebyshev_polynomial_u", "special_shifted_chebyshev_polynomial_v",
    "special_shifted_chebyshev_polynomial_w", "special_hermite_polynomial_h", "special_hermite_polynomial_he",
    "special_laguerre_polynomial_l", "special_legendre_polynomial_p")
