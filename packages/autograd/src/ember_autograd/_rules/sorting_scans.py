"""Derivatives of sorting and scans: the values of sort/topk/kthvalue/nanmedian/mode and
cummax/cummin go back to where they came from (a scatter along `dim` by the returned
indices); cumsum, cumprod and logcumsumexp have closed forms; diff is composite; the
counting and searching ops (argsort, unique, searchsorted, histc, ...) are not
differentiable.
"""
import ember_tensor as E

from ._registry import RESULT, composite, derivative, not_differentiable
from .reduction import _evenly_distribute


def _wrap(dim, ndim):
    return dim % max(ndim, 1)


def _scatter_back(grad, indices, shape, dim, keepdim=True):
    """Gradient of values taken at `indices` along `dim`: zeros with grad put back there."""
    if not shape:
        return grad.reshape(())
    dim = _wrap(dim, len(shape))
    if not keepdim:
        grad, indices = grad.unsqueeze(dim), indices.unsqueeze(dim)
    return E.zeros(shape, dtype=grad.dtype, device=grad.device).scatter_add(dim, indices, grad)


def _values_grad(grad):
    return grad[0] if isinstance(grad, tuple) else grad


@derivative("sort", save=lambda input, dim=-1, *a, **k: (tuple(input.shape), dim, RESULT[1]))
def sort(ctx, grad, shape, dim, indices):
    grad = _values_grad(grad)
    return None if grad is None else _scatter_back(grad, indices, shape, dim)


@derivative("topk", save=lambda input, k, dim=-1, *a, **kw: (tuple(input.shape), dim, RESULT[1]))
def topk(ctx, grad, shape, dim, indices):
    grad = _values_grad(grad)
    return None if grad is None else _scatter_back(grad, indices, shape, dim)


def _along_dim_save(default_dim):
    def save(input, *args, **kwargs):
        # kthvalue(input, k, dim, keepdim) takes k first; mode/nanmedian(input, dim, keepdim).
        names = ("k", "dim", "keepdim") if default_dim == "kth" else ("dim", "keepdim")
        bound = dict(zip(names, args), **kwargs)
        dim = bound.get("dim", None if default_dim is None else -1)
        keepdim = bound.get("keepdim", False)
        if dim is None:  # one value: its position is found again at backward time
            return (tuple(input.shape), None, keepdim, RESULT, input)
        return (tuple(input.shape), dim, keepdim, RESULT[1], None)
    return save


def _selection(ctx, grad, shape, dim, keepdim, picked, input):
    if dim is None:
        # nanmedian over all elements: PyTorch's rule is median()'s, the gradient shared
        # among the elements equal to the result (among the NaNs when a NaN is returned).
        return _evenly_distribute(grad, input, picked, shape, tuple(range(len(shape))), False)
    grad = _values_grad(grad)
    return None if grad is None else _scatter_back(grad, picked, shape, dim, keepdim)


derivative("kthvalue", save=_along_dim_save("kth"))(_selection)
derivative("mode", save=_along_dim_save(-1))(_selection)
derivative("nanmedian", save=_along_dim_save(None))(_selection)


@derivative("cummax", save=lambda input, dim, **_: (tuple(input.shape), dim, RESULT[1]))
def cummax(ctx, grad, shape, dim, indices):
    grad = _values_grad(grad)
    return None if grad is None else _scatter_back(grad, indices, shape, dim)


derivative("cummin", save=lambda input, dim, **_: (tuple(input.shape), dim, RESULT[1]))(cummax)


def reverse_cumsum(grad, dim):
    """sum over j >= i of grad[j], along `dim` (the adjoint of cumsum)."""
    if not grad.dim():
        return grad
    return grad.sum(dim, keepdim=True) - grad.cumsum(dim) + grad


@derivative("cumsum", "cumsum_", save=lambda input, dim, **_: (dim, input.dtype))
def cumsum(ctx, grad, dim, dtype):
    return reverse_cumsum(grad, dim).to(dtype)


@derivative("cumprod", "cumprod_", save=lambda input, dim, **_: (input, dim, RESULT))
def cumprod(ctx, grad, input, dim, result):
    if not input.dim():
        return grad
    # A holomorphic map: the conjugate Wirtinger derivative is the formula below taken at
    # the conjugated input and output (no-ops for real tensors).
    input, result = input.conj(), result.conj()
    # grad[k] = sum over i >= k of grad_out[i] * prod(x[j] for j <= i, j != k). Before a
    # line's first zero that is reverse_cumsum(grad_out * out) / x; after it, 0; at it,
    # prod(x before it) * sum over i >= it of grad_out[i] * prod(x[j], it < j <= i).
    zeros_seen = (input == 0).cumsum(dim)
    before = zeros_seen == 0
    first_zero = (input == 0) & (zeros_seen == 1)
    safe_input = E.where(before, input, 1.0)
    before_zero = E.where(before, reverse_cumsum(grad * result, dim) / safe_input, 0.0)
    if not bool(first_zero.any()):
        return before_zero
    after = ~before
    prefix = safe_input.prod(dim, keepdim=True)
    tail = E.where(after & ~first_zero, input, 1.0).cumprod(dim)
    at_zero = (E.where(after, grad * tail, 0.0)).sum(dim, keepdim=True) * prefix
    return E.where(first_zero, at_zero, before_zero)


@derivative("logcumsumexp", save=lambda input, dim, **_: (input, dim, RESULT))
def logcumsumexp(ctx, grad, input, dim, result):
    # d out[i] / d x[k] = exp(x[k] - out[i]) for k <= i, summed in log space as PyTorch
    # does (TensorFlow's formula): the positive and negative parts of grad each go through a
    # reverse logcumsumexp, so -inf/inf entries (exp(x) * exp(-out) = 0 * inf) stay finite.
    if grad.is_complex():  # no sign split needed: the complex log carries the phase
        return (_reverse_logcumsumexp(grad.conj().log() - result, dim) + input).exp().conj()
    lowest = E.finfo(grad.dtype).min
    log_abs_grad = grad.abs().log()
    positive = _reverse_logcumsumexp(E.where(grad > 0, log_abs_grad, lowest) - result, dim)
    negative = _reverse_logcumsumexp(E.where(grad < 0, log_abs_grad, lowest) - result, dim)
    return (positive + input).exp() - (negative + input).exp()


def _reverse_logcumsumexp(x, dim):
    return x.flip(dim).logcumsumexp(dim).flip(dim)


composite("diff")
not_differentiable("argsort", "searchsorted", "bucketize", "histc", "bincount")


def _unique_op(input, sorted=True, return_inverse=False, return_counts=False, dim=None, **_):  # noqa: A002
    return "_unique2" if dim is None else "unique_dim"


def _not_implemented(ctx, grad, op_name):
    raise RuntimeError(f"the derivative for '{op_name}' is not implemented.")


# PyTorch records unique's values (not its inverse or counts) with a node whose backward
# raises: they require grad, as the input does, so the failure is at backward, not a
# silently detached result.
derivative("unique", save=lambda *args, **kwargs: (_unique_op(*args, **kwargs),),
           name=lambda *args, **kwargs: "Unique2Backward0" if _unique_op(*args, **kwargs) == "_unique2"
           else "UniqueDimBackward0")(_not_implemented)
derivative("unique_consecutive", save=lambda *args, **kwargs: ("unique_consecutive",),
           name="UniqueConsecutiveBackward0")(_not_implemented)
