"""Special functions that ember_tensor does not have, as ember kernels.

- ``gammainc(a, x)``: the regularized lower incomplete gamma function
  P(a, x) = gamma(a, x) / Gamma(a) (``torch.special.gammainc``), for Gamma.cdf and Chi2.cdf.
  Computed in float64 whatever the inputs' dtype, one element at a time by one
  ``ember_tensor.kernel`` (CPU and CUDA from one source): the power series for x < a + 1,
  the continued fraction for Q = 1 - P otherwise (Numerical Recipes' ``gser``/``gcf``,
  the fraction's convergents by Wallis' recurrences),
  each element stopping as soon as it has converged (~8 steps on average for a in
  [0.1, 4], x in [0, 8)), where a loop of tensor ops ran every pending element through
  every step with ~10 ops a step.
"""
import math

import ember_autograd
import ember_tensor as torch

from .utils import finfo

__all__ = ["gammainc"]

# The continued fraction's recurrences are scaled down by _RESCALE (exact, a power of
# two) once they pass _RESCALE_ABOVE, far from float64's overflow.
_RESCALE_ABOVE = 2.0 ** 512
_RESCALE = 2.0 ** -512
# Near x = a the series needs about 8.6 sqrt(a) terms: past this many steps (a beyond
# ~5e6, x within a few sqrt(a) of a) the Wilson-Hilferty approximation takes over, whose
# absolute error is about 4.5e-3 / a (measured against the series): below 1e-9 there.
_MAX_STEPS = 20_000
_SQRT_HALF = math.sqrt(0.5)


def gammainc(a, x):
    """The regularized lower incomplete gamma function P(a, x), elementwise (broadcast).

    PyTorch's values at the edges: NaN for a < 0, x < 0, a NaN or a = x = 0 and for
    a = x = inf; 0 at x = 0 and for a = inf; 1 at x = inf and for a = 0 < x.
    Differentiable in ``x`` (dP/dx is the Gamma(a, 1) density); like PyTorch, a gradient
    through ``a`` raises NotImplementedError.

    >>> import ember_tensor as torch
    >>> gammainc(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 0.0]))
    tensor([0.6321, 0.0000])
    """
    a, x = torch.broadcast_tensors(torch.as_tensor(a), torch.as_tensor(x))
    if not ember_autograd.is_grad_enabled():
        return _gammainc_values(a, x)
    a_value = a.detach()  # never recorded: P has no derivative in a
    result = _GammaincInX.apply(a_value, x) if x.requires_grad else _gammainc_values(a_value, x)
    if a.requires_grad:
        # A separate node for a, so that only a gradient asked of a itself raises, as in
        # PyTorch (autograd.grad(P, [x]) works while a requires grad).
        result = result + _NoDerivativeInA.apply(a)
    return result


class _GammaincInX(ember_autograd.Function):
    """P(a, x) differentiable in x: dP/dx is the Gamma(a, 1) density (PyTorch's formula)."""

    @staticmethod
    def forward(ctx, a, x):
        ctx.save_for_backward(a, x)
        return _gammainc_values(a, x.detach())

    @staticmethod
    def backward(ctx, grad_output):
        a, x = ctx.saved_tensors
        # Written with ember ops so that it can itself be differentiated in x.
        return None, grad_output * torch.exp((a - 1) * torch.log(x) - x - torch.lgamma(a))


class _NoDerivativeInA(ember_autograd.Function):
    """Zeros shaped like a, whose backward raises PyTorch's error for igamma's first argument."""

    @staticmethod
    def forward(ctx, a):
        return torch.zeros_like(a)

    @staticmethod
    def backward(ctx, grad_output):
        raise NotImplementedError("the derivative for 'igamma: input' is not implemented.")


def _gammainc_values(a, x):
    """P(a, x) of same-shape tensors, in their (promoted floating) dtype; no gradient."""
    dtype = torch.promote_types(a.dtype, x.dtype)
    if not dtype.is_floating_point:
        dtype = torch.get_default_dtype()
    # Iterate until a step changes the result by less than the result dtype's precision
    # (float32 results need about half the steps of float64 ones).
    eps = finfo(dtype).eps / 2
    return _gammainc_kernel(a.double(), x.double(), eps).to(dtype)


@torch.kernel
def _gammainc_kernel(a, x, eps):
    """P(a, x) of one float64 pair, to relative precision `eps`, with PyTorch's values at
    the edges: NaN for a < 0, x < 0, a NaN or a = x = 0 and for a = x = inf; 0 at x = 0
    and for a = inf; 1 at x = inf and for a = 0 < x."""
    if not (a >= 0.0 and x >= 0.0):  # a NaN, or a negative
        return math.nan
    if a == 0.0:
        return 1.0 if x > 0.0 else math.nan
    if math.isinf(a):
        return math.nan if math.isinf(x) else 0.0
    if x == 0.0:
        return 0.0
    if math.isinf(x):
        return 1.0
    if x < a + 1.0:
        return _lower_series(a, x, eps)
    return 1.0 - _upper_fraction(a, x, eps)


@torch.kernel.helper
def _lower_series(a, x, eps):
    """P(a, x) for 0 < x < a + 1: x^a e^-x / Gamma(a + 1) * sum_n x^n / ((a + 1)...(a + n))."""
    term = 1.0
    total = 1.0
    denominator = a
    for _ in range(_MAX_STEPS):
        denominator += 1.0
        term *= x / denominator
        total += term
        # The terms fall monotonically (x < a + n): stop when one is below eps of the sum.
        if term <= eps * total:
            return math.exp(a * math.log(x) - x - math.lgamma(a + 1.0)) * total
    return _wilson_hilferty(a, x)


@torch.kernel.helper
def _upper_fraction(a, x, eps):
    """Q(a, x) = 1 - P(a, x) for x >= a + 1 > 1: x^a e^-x / Gamma(a) times the continued
    fraction 1 / (x + 1 - a - 1 (1 - a) / (x + 3 - a - 2 (2 - a) / (x + 5 - a - ...))).

    The convergents B_n / A_n come from Wallis' three-term recurrences, whose chains are
    multiply-adds; the one division a step only reads them (modified Lentz divides on
    both of its chains, ~3x slower a step). A and B grow about as (2n)!: both are scaled
    down together by 2**-512 (exactly) before they can overflow.
    """
    b = x + 1.0 - a
    a_previous, a_current = 1.0, b  # A_-1, A_0
    b_previous, b_current = 0.0, 1.0  # B_-1, B_0
    fraction = 1.0 / b
    for n in range(1, _MAX_STEPS + 1):
        an = (a - n) * n
        b += 2.0
        a_previous, a_current = a_current, b * a_current + an * a_previous
        b_previous, b_current = b_current, b * b_current + an * b_previous
        if abs(a_current) > _RESCALE_ABOVE:
            a_previous *= _RESCALE
            a_current *= _RESCALE
            b_previous *= _RESCALE
            b_current *= _RESCALE
        if a_current == 0.0:  # no convergent at this step (a guard: not seen for x >= a + 1)
            continue
        previous, fraction = fraction, b_current / a_current
        if abs(fraction - previous) <= eps * fraction:
            return math.exp(a * math.log(x) - x - math.lgamma(a)) * fraction
    return 1.0 - _wilson_hilferty(a, x)


@torch.kernel.helper
def _wilson_hilferty(a, x):
    """P(a, x) ~ Phi(z), z = 3 sqrt(a) ((x / a)^(1/3) - 1 + 1 / (9 a)): for very large a only."""
    z = 3.0 * math.sqrt(a) * ((x / a) ** (1.0 / 3.0) - 1.0 + 1.0 / (9.0 * a))
    return 0.5 * math.erfc(-z * _SQRT_HALF)
