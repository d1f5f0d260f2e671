"""Samplers that ember_tensor does not have as ops, composed from its public ops.

- ``standard_gamma(alpha)``: Marsaglia and Tsang's method, the rejection loop vectorised
  (each round redraws only the rejected elements), with the implicit reparameterisation
  gradient (Figurnov et al., 2018) as an autograd Function: d x / d alpha =
  -(d F(x; alpha) / d alpha) / f(x; alpha).
- ``sample_binomial(count, probs)``: exact, by splitting on Beta-distributed order statistics
  (log2(n) vectorised rounds), then a sum of at most 16 Bernoulli draws.
"""
import math

import ember_autograd
import ember_tensor as torch

from .utils import finfo

# Above this shape the series for dP/dalpha needs too many terms; the Wilson-Hilferty
# approximation of the gamma quantile is then accurate to well under 1e-3 (relative).
_SERIES_MAX_ALPHA = 100.0
_BINOMIAL_DIRECT = 16  # counts at or below this are finished by summing Bernoulli draws


def _sample_standard_gamma(alpha):
    """Gamma(alpha, 1) draws of alpha's shape, dtype and device (no gradient)."""
    shape = alpha.shape
    # alpha < 1: draw Gamma(alpha + 1) and multiply by U**(1/alpha) (Marsaglia and Tsang, sec. 6).
    small = alpha < 1
    a = torch.where(small, alpha + 1, alpha).reshape(-1)
    d = a - 1.0 / 3.0
    c = (9.0 * d).rsqrt()
    out = torch.empty_like(a)
    pending = torch.arange(a.numel(), device=alpha.device)
    while pending.numel() > 0:
        dp, cp = d[pending], c[pending]
        x = torch.randn(pending.shape, dtype=a.dtype, device=a.device)
        v = (1 + cp * x) ** 3
        u = torch.rand(pending.shape, dtype=a.dtype, device=a.device)
        # log(v) of a negative v is NaN and compares False: rejected, as it must be.
        accepted = (v > 0) & (torch.log(u) < 0.5 * x * x + dp - dp * v + dp * torch.log(v.clamp(min=0)))
        out[pending[accepted]] = (dp * v)[accepted]
        pending = pending[~accepted]
    out = out.reshape(shape)
    boost = torch.where(small, torch.rand(shape, dtype=a.dtype, device=a.device).pow(alpha.reciprocal()),
                        torch.ones_like(alpha))
    return (out * boost).clamp(min=finfo(alpha.dtype).tiny)


def _standard_gamma_grad(x, alpha):
    """d x / d alpha of a Gamma(alpha, 1) draw x, holding its CDF value fixed."""
    dtype = x.dtype
    x64, a64 = x.double(), alpha.double()
    log_x = torch.log(x64)
    # P(a, x) = x^a e^-x sum_n x^n / Gamma(a + n + 1) and f(x; a) = x^(a-1) e^-x / Gamma(a), so
    # dx/da = -x Gamma(a) sum_n x^n / Gamma(a + n + 1) (log x - digamma(a + n + 1)): the
    # common factor cancels and no tiny density is divided by.
    series_a = a64.clamp(max=_SERIES_MAX_ALPHA)
    total = torch.zeros_like(x64)
    log_base = log_x + torch.lgamma(series_a)
    n = 0
    while True:
        shifted = series_a + (n + 1)
        term = torch.exp(log_base + n * log_x - torch.lgamma(shifted)) * (log_x - torch.digamma(shifted))
        total = total + term
        n += 1
        # Terms grow while n < x - a and then fall faster than geometrically.
        if n % 8 == 0 and (n > 2000 or bool((term.abs() <= 1e-15 * total.abs() + 1e-300).all())):
            break
    series = -total
    # Wilson-Hilferty: x = a t^3 with t = 1 - 1/(9a) + z / (3 sqrt(a)), z held fixed.
    t = (x64 / a64).pow(1.0 / 3.0)
    z = (t - 1 + 1 / (9 * a64)) * 3 * a64.sqrt()
    dt_da = 1 / (9 * a64 * a64) - z / (6 * a64.pow(1.5))
    wilson_hilferty = t.pow(3) + 3 * a64 * t * t * dt_da
    return torch.where(a64 < _SERIES_MAX_ALPHA, series, wilson_hilferty).to(dtype)


class _StandardGamma(ember_autograd.Function):
    """Gamma(alpha, 1) sampling with the implicit reparameterisation gradient."""

    @staticmethod
    def forward(ctx, alpha):
        x = _sample_standard_gamma(alpha.detach())
        ctx.save_for_backward(x, alpha)
        return x

    @staticmethod
    def backward(ctx, grad_output):
        x, alpha = ctx.saved_tensors
        with ember_autograd.no_grad():
            return grad_output * _standard_gamma_grad(x, alpha.detach())


def standard_gamma(alpha):
    """Gamma(alpha, 1) draws of alpha's shape; differentiable in alpha (``torch._standard_gamma``)."""
    if alpha.requires_grad and ember_autograd.is_grad_enabled():
        return _StandardGamma.apply(alpha)
    return _sample_standard_gamma(alpha)


def sample_dirichlet(concentration):
    """Dirichlet draws: independent gammas normalised over the last dim (differentiable)."""
    gammas = standard_gamma(concentration)
    # A float32 sum of tiny gammas can round to 0: keep the simplex defined.
    return gammas / gammas.sum(-1, keepdim=True).clamp(min=finfo(gammas.dtype).tiny)


def sample_binomial(count, probs):
    """Binomial(count, probs) draws of their (broadcast) shape, as floats."""
    count, probs = torch.broadcast_tensors(count.to(probs.dtype), probs)
    n, p = count.clone(), probs.clone()
    successes = torch.zeros_like(p)
    while bool((n > _BINOMIAL_DIRECT).any()):
        big = n > _BINOMIAL_DIRECT
        # U_(i), the i-th smallest of n uniforms, is Beta(i, n + 1 - i); the uniforms on
        # either side of it are uniform on their interval, so the count below p recurses.
        i = torch.floor((n + 1) / 2)
        ga = _sample_standard_gamma(torch.where(big, i, torch.ones_like(i)))
        gb = _sample_standard_gamma(torch.where(big, n + 1 - i, torch.ones_like(i)))
        y = (ga / (ga + gb)).clamp(min=finfo(p.dtype).tiny, max=1 - finfo(p.dtype).eps)
        above = y <= p
        successes = torch.where(big & above, successes + i, successes)
        n = torch.where(big, torch.where(above, n - i, i - 1), n)
        p = torch.where(big, torch.where(above, (p - y) / (1 - y), p / y).clamp(min=0, max=1), p)
    draws = torch.rand(p.shape + (_BINOMIAL_DIRECT,), dtype=p.dtype, device=p.device)
    slots = torch.arange(_BINOMIAL_DIRECT, device=p.device).to(p.dtype)
    hits = (draws < p.unsqueeze(-1)) & (slots < n.unsqueeze(-1))
    return successes + hits.to(p.dtype).sum(-1)


def log_modified_bessel(x, order=0):
    """log I_order(x) for order 0 or 1, x >= 0 (Abramowitz and Stegun 9.8.1-9.8.4 polynomials)."""
    y = x / 3.75
    y = y * y
    small_coef = ([1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.0360768, 0.0045813] if order == 0 else
                  [0.5, 0.87890594, 0.51498869, 0.15084934, 0.02658733, 0.00301532, 0.00032411])
    large_coef = ([0.39894228, 0.01328592, 0.00225319, -0.00157565, 0.00916281, -0.02057706, 0.02635537,
                   -0.01647633, 0.00392377] if order == 0 else
                  [0.39894228, -0.03988024, -0.00362018, 0.00163801, -0.01031555, 0.02282967, -0.02895312,
                   0.01787654, -0.00420059])
    small = _polynomial(y, small_coef)
    if order == 1:
        small = x.abs() * small
    small = small.log()
    y = 3.75 / x.clamp(min=3.75)
    large = x - 0.5 * x.clamp(min=1e-30).log() + _polynomial(y, large_coef).log()
    return torch.where(x < 3.75, small, large)


def _polynomial(x, coefs):
    """Horner's rule for sum_k coefs[k] x^k."""
    result = torch.full_like(x, coefs[-1])
    for coef in reversed(coefs[:-1]):
        result = result * x + coef
    return result


LOG_2PI = math.log(2 * math.pi)
