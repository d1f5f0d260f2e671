"""Scatter-add of gradients into an input's elements, for views whose elements overlap
(unfold, as_strided) and for advanced indexing with repeated indices.

The sum is an `index_add_` on the values' device (atomic adds on a GPU), wrapped as an
autograd `Function` whose backward is a gather (differentiable), so gradients of
gradients still work.
"""

import ember_tensor as E

from .._function import Function


class _IndexAddFlat(Function):
    @staticmethod
    def forward(ctx, values, index, numel):
        ctx.save_for_backward(index)
        # index_add_ runs on the values' device (atomic adds on a GPU), no host round trip.
        return values.new_zeros(numel).index_add_(0, index.reshape(-1), values.reshape(-1))

    @staticmethod
    def backward(ctx, grad):
        (index,) = ctx.saved_tensors
        return grad[index], None, None


def scatter_add_flat(values, index, shape):
    """A tensor of `shape`: zeros plus, at flat position ``index[i]``, the sum of ``values[i]``."""
    numel = 1
    for n in shape:
        numel *= n
    return _IndexAddFlat.apply(values, index, numel).reshape(shape)


def element_positions(shape):
    """int64 tensor of `shape` holding each element's flat (row-major) position."""
    numel = 1
    for n in shape:
        numel *= n
    return E.arange(numel).reshape(shape)
