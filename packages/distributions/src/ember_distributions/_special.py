"""Special functions that ember_tensor does not have, composed from its public ops.

- ``gammainc(a, x)``: the regularized lower incomplete gamma function
  P(a, x) = gamma(a, x) / Gamma(a) (``torch.special.gammainc``), for Gamma.cdf and Chi2.cdf.
  Computed in float64 whatever the inputs' dtype: the power series for x < a + 1, the
  continued fraction for Q = 1 - P otherwise (Numerical Recipes' ``gser``/``gcf``), each
  iterated on the shrinking set of elements that have not converged yet.
"""
import math

import ember_autograd
import ember_tensor as torch

from .utils import finfo

__all__ = ["gammainc"]

_TINY = 1e-300  # Lentz's guard against a zero denominator in the continued fraction
_CHECK_EVERY = 8  # convergence is read back (a host sync on CUDA) once per this many steps
# Near x = a the series needs about 8.6 sqrt(a) terms: past this many steps (a beyond
# ~5e6, x within a few sqrt(a) of a) the Wilson-Hilferty approximation takes over, whose
# absolute error is about 4.5e-3 / a (measured against the series): below 1e-9 there.
_MAX_STEPS = 20_000


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
    shape = a.shape
    a, x = a.double().reshape(-1), x.double().reshape(-1)
    result = torch.full_like(a, math.nan)
    interior = (a > 0) & (x > 0) & torch.isfinite(a) & torch.isfinite(x)
    by_series = interior & (x < a + 1)
    by_fraction = interior & (x >= a + 1)
    result[by_series] = _lower_series(a[by_series], x[by_series], eps)
    result[by_fraction] = 1 - _upper_fraction(a[by_fraction], x[by_fraction], eps)
    positive_a = a > 0
    result = torch.where((x == 0) & positive_a, 0.0, result)
    result = torch.where(torch.isinf(a) & (x < math.inf) & (x >= 0), 0.0, result)
    result = torch.where((x == math.inf) & positive_a & torch.isfinite(a), 1.0, result)
    result = torch.where((a == 0) & (x > 0), 1.0, result)
    return result.reshape(shape).to(dtype)


def _lower_series(a, x, eps):
    """P(a, x) for 0 < x < a + 1: x^a e^-x / Gamma(a + 1) * sum_n x^n / ((a + 1)...(a + n))."""
    if a.numel() == 0:
        return a

    def step(n, x, term, total, denominator):
        denominator = denominator + 1
        term = term * x / denominator
        return x, term, total + term, denominator

    ones = torch.ones_like(a)
    # The terms fall monotonically (x < a + n): stop when one is below eps of the sum.
    total = _iterate((x, ones, ones, a.clone()), step, lambda x, term, total, _: term <= eps * total,
                     lambda x, term, total, _: total)
    series = torch.exp(a * torch.log(x) - x - torch.lgamma(a + 1)) * total
    return _where_unconverged(total, series, _wilson_hilferty, a, x)


def _upper_fraction(a, x, eps):
    """Q(a, x) = 1 - P(a, x) for x >= a + 1 > 1: x^a e^-x / Gamma(a) times the continued
    fraction 1 / (x + 1 - a - 1 (1 - a) / (x + 3 - a - 2 (2 - a) / (x + 5 - a - ...))),
    by the modified Lentz method."""
    if a.numel() == 0:
        return a

    def step(n, a, b, c, d, h, delta):
        an = (a - n) * n
        b = b + 2
        d = an * d + b
        d = torch.where(d == 0, _TINY, d)  # Lentz's guard: a zero denominator becomes tiny
        c = b + an / c
        c = torch.where(c == 0, _TINY, c)
        d = d.reciprocal()
        delta = d * c
        return a, b, c, d, h * delta, delta

    b = x + 1 - a
    d = b.reciprocal()
    fraction = _iterate((a, b, torch.full_like(a, 1 / _TINY), d, d, torch.zeros_like(a)), step,
                        lambda *state: (state[-1] - 1).abs() <= eps, lambda *state: state[4])
    upper = torch.exp(a * torch.log(x) - x - torch.lgamma(a)) * fraction
    return _where_unconverged(fraction, upper, lambda a, x: 1 - _wilson_hilferty(a, x), a, x)


def _iterate(state, step, converged, value):
    """Run ``state = step(n, *state)`` for n = 1, 2, ... until ``converged(*state)`` holds
    for every element, and return ``value(*state)``: NaN for the elements that have not
    converged after _MAX_STEPS.

    ``state`` is a tuple of 1-d tensors, one element per problem (inputs that ``step``
    reads included). Converged elements take further steps (which only refine them) until
    at most half the elements are pending; then the finished ones are written out and the
    state shrinks to the pending ones, so that a few slow elements do not keep every
    element iterating, and no step pays for a compaction that saves little.
    """
    out = torch.full_like(state[1], math.nan)
    index = torch.arange(out.numel(), device=out.device)
    pending = None
    for n in range(1, _MAX_STEPS + 1):
        state = step(n, *state)
        if n % _CHECK_EVERY:
            continue
        pending = ~converged(*state)
        remaining = int(pending.sum())
        if remaining == 0:
            pending = None
            break
        if remaining <= index.numel() // 2:
            done = ~pending
            out[index[done]] = value(*state)[done]
            index, state, pending = index[pending], tuple(s[pending] for s in state), None
    last = value(*state)
    if pending is not None:  # out of steps: what has not converged is NaN
        last = torch.where(pending, math.nan, last)
    out[index] = last
    return out


def _where_unconverged(iterated, result, approximate, a, x):
    """``result``, with ``approximate(a, x)`` where the iteration did not converge (NaN),
    computed for those elements only (there are rarely any)."""
    unconverged = torch.isnan(iterated)
    if bool(unconverged.any()):
        result = result.clone()
        result[unconverged] = approximate(a[unconverged], x[unconverged])
    return result


def _wilson_hilferty(a, x):
    """P(a, x) ~ Phi(z), z = 3 sqrt(a) ((x / a)^(1/3) - 1 + 1 / (9 a)): for very large a only."""
    z = 3 * a.sqrt() * ((x / a).pow(1 / 3) - 1 + 1 / (9 * a))
    return 0.5 * torch.erfc(-z / math.sqrt(2))
