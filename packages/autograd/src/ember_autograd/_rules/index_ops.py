"""Derivatives of the index ops: gather/scatter and their reductions, index_select/add/
copy/fill, index_put, take/put, the masked ops; nonzero and argwhere are not differentiable.

Each formula is the adjoint index op (gather <-> scatter_add, index_select <-> index_add,
take <-> put with accumulate, masked_select <-> masked_scatter), written with ember's
out-of-place ops so that it can itself be differentiated.
"""
import ember_tensor as E
from ember_tensor import Tensor

from ._registry import RESULT, composite, derivative, not_differentiable


def _zeros(shape, like):
    return E.zeros(shape, dtype=like.dtype, device=like.device)


@derivative("gather", save=lambda input, dim, index, **_: (tuple(input.shape), dim, index))
def gather(ctx, grad, shape, dim, index):
    return _zeros(shape, grad).scatter_add(dim, index, grad)


@derivative("index_select", save=lambda input, dim, index, **_: (tuple(input.shape), dim, index))
def index_select(ctx, grad, shape, dim, index):
    if not shape:
        return grad.reshape(())
    return _zeros(shape, grad).index_add(dim, index, grad)


@derivative("index_add", "index_add_", inputs=("input", "source"),
            save=lambda input, dim, index, source, *, alpha=1, **_: (dim, index, alpha, source.dim()))
def index_add(ctx, grad, dim, index, alpha, source_dim):
    grad_source = None
    if ctx.needs_input_grad[1]:
        grad_source = grad.index_select(dim, index) if grad.dim() else grad.reshape(1)
        if alpha != 1:
            grad_source = grad_source * alpha
        if source_dim == 0:
            grad_source = grad_source.reshape(())
    return grad, grad_source


@derivative("index_copy", "index_copy_", inputs=("input", "source"),
            save=lambda input, dim, index, source, **_: (dim, index, source.dim()))
def index_copy(ctx, grad, dim, index, source_dim):
    grad_self = grad.index_fill(dim, index, 0.0) if ctx.needs_input_grad[0] else None
    grad_source = None
    if ctx.needs_input_grad[1]:
        grad_source = grad.index_select(dim, index) if grad.dim() else grad.reshape(1)
        if source_dim == 0:
            grad_source = grad_source.reshape(())
    return grad_self, grad_source


@derivative("index_fill", "index_fill_", save=lambda input, dim, index, value: (dim, index))
def index_fill(ctx, grad, dim, index):
    return grad.index_fill(dim, index, 0.0)


def _scatter_save(input, dim, index, src=None, *, value=None, reduce=None):
    return (dim, index, reduce, isinstance(src, Tensor))


@derivative("scatter", "scatter_", inputs=("input", "src"), save=_scatter_save)
def scatter(ctx, grad, dim, index, reduce, src_is_tensor):
    if reduce == "multiply":
        raise NotImplementedError("the derivative of scatter with reduce='multiply' is not implemented")
    grad_self = grad if reduce == "add" else grad.scatter(dim, index, 0.0)
    grad_src = grad.gather(dim, index) if src_is_tensor and ctx.needs_input_grad[1] else None
    return grad_self, grad_src


@derivative("scatter_add", "scatter_add_", inputs=("input", "src"),
            save=lambda input, dim, index, src: (dim, index))
def scatter_add(ctx, grad, dim, index):
    return grad, grad.gather(dim, index) if ctx.needs_input_grad[1] else None


def _scatter_reduce_save(input, dim, index, src, reduce, *, include_self=True):
    if input.is_complex():  # PyTorch's refusal, when the result would require grad
        raise RuntimeError("scatter_reduce does not support automatic differentiation for outputs with complex "
                           "dtype.")
    return (input, dim, index, src, reduce, include_self, RESULT)


@derivative("scatter_reduce", "scatter_reduce_", inputs=("input", "src"), save=_scatter_reduce_save)
def scatter_reduce(ctx, grad, input, dim, index, src, reduce, include_self, result):
    if reduce == "sum":
        grad_self = grad if include_self else grad.scatter(dim, index, 0.0)
        return grad_self, grad.gather(dim, index)
    if reduce == "mean":
        ones = E.ones_like(src)
        counts = _zeros(tuple(input.shape), grad).scatter_add(dim, index, ones)
        if include_self:
            counts = counts + 1
        else:
            counts = counts.masked_fill(counts == 0, 1.0)
        grad_self = grad / counts
        if not include_self:
            grad_self = grad_self.scatter(dim, index, 0.0)
        return grad_self, (grad / counts).gather(dim, index)
    if reduce in ("amax", "amin"):
        # The gradient is shared evenly among the values (of self and src) equal to the result.
        self_hits = (input == result).to(grad.dtype)
        if not include_self:
            self_hits = self_hits.scatter(dim, index, 0.0)
        src_hits = (src == result.gather(dim, index)).to(grad.dtype)
        counts = self_hits.scatter_add(dim, index, src_hits)
        share = grad / counts.masked_fill(counts == 0, 1.0)
        return share * self_hits, share.gather(dim, index) * src_hits
    return _scatter_prod_grads(grad, input, dim, index, src, include_self, result)


def _scatter_prod_grads(grad, input, dim, index, src, include_self, result):
    """Gradient of a product: the product of the other factors of each element's group,
    found without dividing by zero (a group with two zeros gives 0 everywhere)."""
    self_zero = (input == 0).to(grad.dtype)
    if not include_self:
        self_zero = self_zero.scatter(dim, index, 0.0)
    zero_count = self_zero.scatter_add(dim, index, (src == 0).to(grad.dtype))
    nonzero_self = E.where(input == 0, 1.0, input).to(grad.dtype)
    if not include_self:
        nonzero_self = nonzero_self.scatter(dim, index, 1.0)
    nonzero_prod = nonzero_self.scatter_reduce(dim, index, E.where(src == 0, 1.0, src).to(grad.dtype), "prod")

    def others(values, count, product, full):
        # product of the group's other factors, for a member with value `values`
        return E.where(values == 0, E.where(count == 1, product, 0.0),
                       E.where(count == 0, full / E.where(values == 0, 1.0, values), 0.0))

    if include_self:
        grad_self = grad * others(input, zero_count, nonzero_prod, result)
    else:  # the scattered-to elements no longer depend on self
        grad_self = grad.scatter(dim, index, 0.0)
    gathered = [t.gather(dim, index) for t in (grad, zero_count, nonzero_prod, result)]
    grad_src = gathered[0] * others(src, gathered[1], gathered[2], gathered[3])
    return grad_self, grad_src


def _index_put_save(input, indices, values, accumulate=False):
    return (tuple(indices), accumulate, tuple(values.shape))


@derivative("index_put", "index_put_", inputs=("input", "values"), save=_index_put_save)
def index_put(ctx, grad, indices, accumulate, values_shape):
    grad_self = None
    if ctx.needs_input_grad[0]:
        grad_self = grad if accumulate else grad.index_put(indices, _zeros((), grad), False)
    grad_values = None
    if ctx.needs_input_grad[1]:
        key = tuple(slice(None) if i is None else i for i in indices)
        grad_values = grad[key]
    return grad_self, grad_values


@derivative("take", save=lambda input, index: (tuple(input.shape), index))
def take(ctx, grad, shape, index):
    numel = 1
    for n in shape:
        numel *= n
    flat = _zeros((numel,), grad).put(index.reshape(-1), grad.reshape(-1), accumulate=True)
    return flat.reshape(shape)


@derivative("put", "put_", inputs=("input", "source"),
            save=lambda input, index, source, accumulate=False: (index, accumulate, tuple(source.shape)))
def put(ctx, grad, index, accumulate, source_shape):
    grad_self = None
    if ctx.needs_input_grad[0]:
        flat_index = index.reshape(-1)
        grad_self = grad if accumulate else grad.put(flat_index, _zeros((flat_index.numel(),), grad))
    grad_source = grad.take(index).reshape(source_shape) if ctx.needs_input_grad[1] else None
    return grad_self, grad_source


@derivative("masked_fill", "masked_fill_", inputs=("input", "value"),
            save=lambda input, mask, value: (mask,))
def masked_fill(ctx, grad, mask):
    grad_self = grad.masked_fill(mask, 0.0) if ctx.needs_input_grad[0] else None
    grad_value = None
    if len(ctx.needs_input_grad) > 1 and ctx.needs_input_grad[1]:
        grad_value = E.where(mask, grad, 0.0).sum()
    return grad_self, grad_value


@derivative("masked_scatter", "masked_scatter_", inputs=("input", "source"),
            save=lambda input, mask, source: (mask, tuple(source.shape)))
def masked_scatter(ctx, grad, mask, source_shape):
    grad_self = grad.masked_fill(mask, 0.0) if ctx.needs_input_grad[0] else None
    grad_source = None
    if ctx.needs_input_grad[1]:
        numel = 1
        for n in source_shape:
            numel *= n
        picked = grad.masked_select(mask)
        padding = _zeros((numel - picked.numel(),), grad)
        grad_source = E.cat([picked, padding]).reshape(source_shape)
    return grad_self, grad_source


@derivative("masked_select", save=lambda input, mask, **_: (tuple(input.shape), mask))
def masked_select(ctx, grad, shape, mask):
    full = E.broadcast_shapes(shape, tuple(mask.shape))
    return _zeros(full, grad).masked_scatter(mask, grad)


composite("take_along_dim")
# index_reduce is scatter_reduce with the index spread along dim: differentiated through it.
composite("index_reduce", "index_reduce_")
not_differentiable("nonzero", "argwhere")
