"""Derivatives of reductions: sum, mean, prod, max/min, var/std, norm, logsumexp, median,
and the diagonal ops built on them (trace, diag, diag_embed).

Every formula first brings the incoming gradient back to the rank of the input
(`_keep_reduced_dims`) and lets broadcasting do the rest, so one formula serves all dims,
``keepdim`` settings and 0-d inputs.
"""
import builtins
import math

import ember_tensor as E
from ember_tensor import Tensor

from ._conjugate import conj
from ._registry import RESULT, composite, derivative, not_differentiable

_INF = float("inf")


def reduced_dims(shape, dim, empty_is_all=True):
    """The wrapped, sorted dims a reduction over `dim` (None, int or sequence) removes."""
    ndim = len(shape)
    if not ndim:
        return ()
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, (tuple, list)):
        if not dim and empty_is_all:
            return tuple(range(ndim))
        return tuple(sorted(int(d) % ndim for d in dim))
    return (int(dim) % ndim,)


def _keep_reduced_dims(t, shape, dims, keepdim):
    """`t` (a reduction's result or gradient) reshaped to keep the reduced dims as size 1."""
    if keepdim or not dims:
        return t
    kept = tuple(1 if d in dims else n for d, n in enumerate(shape))
    return t.reshape(kept)


def _count(shape, dims):
    n = 1
    for d in dims:
        n *= shape[d]
    return n


def _ieee_ratio(a, b):
    """a / b as a C double would give it: ±inf or nan for b = 0, not ZeroDivisionError.

    PyTorch's backward formulas divide by counts in C++, so var over one element (correction
    1) or over none gives a nan gradient there; a Python float division would raise.
    """
    if b == 0:
        return math.nan if a == 0 else math.copysign(math.inf, a)
    return a / b


def _reduction_save(input, dim=None, keepdim=False, **_):
    # The dims are worked out in backward: sum and mean are recorded far more often than
    # they are differentiated through a second time.
    return (input._data.shape, dim, keepdim)


def _with_result(input, dim=None, keepdim=False, **_):
    shape = input._data.shape
    return (input, RESULT, shape, reduced_dims(shape, dim), keepdim)


# -- sum, mean, prod --------------------------------------------------------------------

@derivative("sum", save=_reduction_save,
            name=lambda input, dim=None, *a, **k: "SumBackward0" if dim is None else "SumBackward1")
def sum(ctx, grad, shape, dim, keepdim):  # noqa: A001
    return _keep_reduced_dims(grad, shape, reduced_dims(shape, dim), keepdim).expand(shape)


@derivative("mean", save=_reduction_save,
            name=lambda input, dim=None, *a, **k: "MeanBackward0" if dim is None else "MeanBackward1")
def mean(ctx, grad, shape, dim, keepdim):
    dims = reduced_dims(shape, dim)
    n = _count(shape, dims)
    # Divided before it is expanded: the same quotient in every element (bit for bit), but
    # one division per reduced slice and a broadcast copy, not a division per element
    # through a zero-stride loop (16x64x128 from a scalar: 43 us against 188 us).
    return (_keep_reduced_dims(grad, shape, dims, keepdim) / n).expand(shape).contiguous()


@derivative("prod", save=lambda input, dim=None, keepdim=False, **_: (
    input, RESULT, input._data.shape, reduced_dims(input._data.shape, dim), keepdim),
    name=lambda input, dim=None, *a, **k: "ProdBackward0" if dim is None else "ProdBackward1")
def prod(ctx, grad, input, result, shape, dims, keepdim):
    grad = _keep_reduced_dims(grad, shape, dims, keepdim)
    result = _keep_reduced_dims(result, shape, dims, keepdim)
    is_zero = input == 0
    if not bool(is_zero.any()):
        return grad * conj(result / input)  # conj: complex inputs (a no-op for real)
    # With zeros, result / input is wrong: the product of the others is 0 when the slice has
    # another zero, and the product of the non-zeros when this element is the only zero.
    zeros = is_zero.sum(dims, keepdim=True) if dims else is_zero.to(grad.dtype)
    nonzero_prod = E.where(is_zero, 1.0, input).prod(dims[0], keepdim=True) if len(dims) == 1 else \
        E.where(is_zero, 1.0, input).reshape(-1).prod().reshape([1] * len(shape))
    others = E.where(is_zero, E.where(zeros == 1, nonzero_prod, 0.0),
                     E.where(zeros > 0, 0.0, result / E.where(is_zero, 1.0, input)))
    return grad * conj(others)


# -- selections: max, min, amax, amin, median ----------------------------------------------

def _evenly_distribute(grad, input, result, shape, dims, keepdim):
    """Gradient of a value that several equal elements produced: shared among them."""
    grad = _keep_reduced_dims(grad, shape, dims, keepdim)
    result = _keep_reduced_dims(result, shape, dims, keepdim)
    chosen = (input == result) | (input.isnan() & result.isnan())
    count = chosen.sum(dims, keepdim=True) if dims else chosen.to(grad.dtype)
    return E.where(chosen, grad / count, 0.0)


def _select_along_dim(grad, indices, shape, dim, keepdim):
    """Gradient of values picked at `indices` along `dim` (max/min/median with a dim)."""
    if not shape:
        return grad
    if not keepdim:
        grad = grad.unsqueeze(dim)
        indices = indices.unsqueeze(dim)
    positions = E.arange(shape[dim], device=grad.device).reshape(
        [shape[dim] if d == dim else 1 for d in range(len(shape))])
    return E.where(positions == indices, grad, 0.0)


def _extreme_save(input, dim=None, keepdim=False, *, other=None, **_):
    shape = input._data.shape
    if isinstance(dim, Tensor) or other is not None:
        return ("elementwise", input, other if other is not None else dim, None, None)
    if dim is None:
        return ("all", input, RESULT, shape, reduced_dims(shape, None))
    return ("dim", RESULT[1], keepdim, shape, reduced_dims(shape, dim))


def _extreme_name(op_name):
    def name(input, dim=None, keepdim=False, *, other=None, **_):
        if isinstance(dim, Tensor) or other is not None:
            return ("Maximum" if op_name == "max" else "Minimum") + "Backward0"
        return f"{op_name.capitalize()}Backward{1 if dim is None else 0}"
    return name


def _extreme(pick):
    def formula(ctx, grad, kind, a, b, shape, dims):
        if kind == "elementwise":
            input, other = a, b
            half = grad / 2
            return (E.where(input == other, half, E.where(pick(input, other), grad, 0.0)),
                    E.where(input == other, half, E.where(pick(other, input), grad, 0.0)))
        if kind == "all":
            return _evenly_distribute(grad, a, b, shape, dims, False), None
        values_grad = grad[0]
        if values_grad is None:
            return None, None
        dim = dims[0] if dims else 0
        return _select_along_dim(values_grad, a, shape, dim, b), None
    return formula


derivative("max", inputs=("input", "other"), save=_extreme_save, name=_extreme_name("max"))(
    _extreme(lambda a, b: a > b))
derivative("min", inputs=("input", "other"), save=_extreme_save, name=_extreme_name("min"))(
    _extreme(lambda a, b: a < b))


def _amax_save(input, dim=(), keepdim=False, **_):
    return _with_result(input, dim, keepdim)


def amax(ctx, grad, input, result, shape, dims, keepdim):
    # PyTorch's scale_grad_by_count over `input == result`: unlike max()'s rule, a NaN result
    # matches no element, and its gradient is nan over the whole reduced slice.
    grad = _keep_reduced_dims(grad, shape, dims, keepdim)
    chosen = input == _keep_reduced_dims(result, shape, dims, keepdim)
    count = chosen.sum(dims, keepdim=True) if dims else chosen.to(grad.dtype)
    return grad / count * chosen


derivative("amax", save=_amax_save)(amax)
derivative("amin", save=_amax_save)(amax)


def _median_save(input, dim=None, keepdim=False, **_):
    shape = input._data.shape
    if dim is None:
        return ("all", input, RESULT, shape, reduced_dims(shape, None))
    return ("dim", RESULT[1], keepdim, shape, reduced_dims(shape, dim))


@derivative("median", save=_median_save,
            name=lambda input, dim=None, *a, **k: "MedianBackward0" if dim is None else "MedianBackward1")
def median(ctx, grad, kind, a, b, shape, dims):
    if kind == "all":
        return _evenly_distribute(grad, a, b, shape, dims, False)
    if grad[0] is None:
        return None
    return _select_along_dim(grad[0], a, shape, dims[0] if dims else 0, b)


# -- var, std ---------------------------------------------------------------------------------

def _correction(dim, unbiased, correction):
    if isinstance(dim, builtins.bool):  # var(input, unbiased)
        dim, unbiased = None, dim
    if correction is None:
        correction = 0 if unbiased is False else 1
    return dim, correction


def _var_save(input, dim=None, unbiased=None, keepdim=False, *, correction=None, **_):
    dim, correction = _correction(dim, unbiased, correction)
    shape = input._data.shape
    return (input, RESULT, shape, reduced_dims(shape, dim), keepdim, correction)


def _var_mean_save(*args, **kwargs):
    input, _, *rest = _var_save(*args, **kwargs)
    return (input, RESULT[0], *rest)


def _var_grad(grad, input, shape, dims, keepdim, correction):
    grad = _keep_reduced_dims(grad, shape, dims, keepdim)
    centered = input - input.mean(dims, keepdim=True) if dims else input - input
    # The degrees of freedom are clamped at 0, as in the forward: a correction past the
    # count gives nan, as in PyTorch, not a sign-flipped gradient.
    return grad * centered * _ieee_ratio(2.0, builtins.max(_count(shape, dims) - correction, 0))


@derivative("var", save=_var_save)
def var(ctx, grad, input, result, shape, dims, keepdim, correction):
    return _var_grad(grad, input, shape, dims, keepdim, correction)


@derivative("std", save=_var_save)
def std(ctx, grad, input, result, shape, dims, keepdim, correction):
    # d std = d var / (2 std); a zero std gives a zero gradient, as in PyTorch.
    result = _keep_reduced_dims(result, shape, dims, keepdim)
    half_grad = _keep_reduced_dims(grad, shape, dims, keepdim) / (2 * result)
    half_grad = E.where(result == 0, 0.0, half_grad)
    return _var_grad(half_grad, input, shape, dims, True, correction)


def _var_mean_formula(is_std):
    def formula(ctx, grads, input, result, shape, dims, keepdim, correction):
        grad_spread, grad_mean = grads
        total = None
        if grad_spread is not None:
            if is_std:
                spread = _keep_reduced_dims(result, shape, dims, keepdim)
                g = _keep_reduced_dims(grad_spread, shape, dims, keepdim) / (2 * spread)
                total = _var_grad(E.where(spread == 0, 0.0, g), input, shape, dims, True, correction)
            else:
                total = _var_grad(grad_spread, input, shape, dims, keepdim, correction)
        if grad_mean is not None:
            g = _keep_reduced_dims(grad_mean, shape, dims, keepdim).expand(shape) * _ieee_ratio(1.0, _count(shape, dims))
            total = g if total is None else total + g
        return total
    return formula


derivative("var_mean", save=_var_mean_save)(_var_mean_formula(False))
derivative("std_mean", save=_var_mean_save)(_var_mean_formula(True))


# -- norm, logsumexp ----------------------------------------------------------------------------

@derivative("norm", name="LinalgVectorNormBackward0",
            save=lambda input, p="fro", dim=None, keepdim=False, *a, **k: (
                input, RESULT, 2 if p in (None, "fro") else p, input._data.shape,
                reduced_dims(input._data.shape, dim), keepdim))
def norm(ctx, grad, input, result, p, shape, dims, keepdim):
    grad = _keep_reduced_dims(grad, shape, dims, keepdim)
    result = _keep_reduced_dims(result, shape, dims, keepdim)
    if p == 0:
        return E.zeros_like(input)
    # sgn: z / |z| for complex inputs (the sign for real ones)
    if p == 1:
        return grad * input.sgn()
    if p in (_INF, -_INF):
        return input.sgn() * _evenly_distribute(grad, input.abs(), result, shape, dims, True)
    if p == 2:
        return E.where(result == 0, 0.0, grad * input / result)
    scale = input * input.abs() ** (p - 2) / result ** (p - 1)
    return E.where(result == 0, 0.0, grad * scale)


@derivative("logsumexp", save=lambda input, dim, keepdim=False, **_: (
    input, RESULT, input._data.shape, reduced_dims(input._data.shape, dim), keepdim))
def logsumexp(ctx, grad, input, result, shape, dims, keepdim):
    grad = _keep_reduced_dims(grad, shape, dims, keepdim)
    result = _keep_reduced_dims(result, shape, dims, keepdim)
    # exp is holomorphic: the conjugate Wirtinger derivative conjugates it (real: a no-op)
    return grad * (input - result).exp().conj()


# -- diagonals -------------------------------------------------------------------------------

def _embed_diagonal(grad, shape, offset, dim1=0, dim2=1):
    out = grad.new_zeros(shape)
    out.diagonal(offset, dim1, dim2).copy_(grad)
    return out


@derivative("trace", save=lambda input: (input._data.shape,))
def trace(ctx, grad, shape):
    return _embed_diagonal(grad.expand(min(shape)), shape, 0)


@derivative("diag", save=lambda input, diagonal=0: (input._data.shape, diagonal),
            name=lambda input, diagonal=0: "DiagEmbedBackward0" if input.dim() == 1 else "DiagonalBackward0")
def diag(ctx, grad, shape, diagonal):
    if len(shape) == 1:
        return grad.diagonal(diagonal)
    return _embed_diagonal(grad, shape, diagonal)


@derivative("diag_embed", save=lambda input, offset=0, dim1=-2, dim2=-1: (offset, dim1, dim2))
def diag_embed(ctx, grad, offset, dim1, dim2):
    return grad.diagonal(offset, dim1, dim2)


not_differentiable("all", "any", "argmax", "argmin", "count_nonzero")
# Compositions of where/sum/amin/amax/sort/gather/lerp: differentiated through their parts.
composite("nansum", "nanmean", "aminmax", "quantile", "nanquantile")
composite("cov", "corrcoef", "cdist")
not_differentiable("histogram", "histogramdd")
# sum_to_size is a sum; the trapezoidal rules are slices, diff, sum and cumsum.
composite("sum_to_size", "trapezoid", "cumulative_trapezoid")
# torch.gradient is slices and arithmetic; renorm is a norm, a where and a product; dist a norm.
composite("gradient", "renorm", "dist")
