"""Derivatives of view ops: the gradient goes back to the input's shape and layout."""
import numpy as np

import ember_tensor as E

from ._registry import composite, derivative, not_differentiable
from ._scatter import element_positions, scatter_add_flat


def _shape(input, *args, **kwargs):
    return (input._data.shape,)


def _embed(grad, shape, select):
    """Zeros of `shape` with `grad` written into the part that `select` views."""
    out = grad.new_zeros(shape)
    select(out).copy_(grad)
    return out


@derivative("view", save=_shape)
def view(ctx, grad, shape):
    return grad.reshape(shape)


@derivative("alias", name="AliasBackward0")
def alias(ctx, grad):
    return grad


@derivative("expand")
def expand(ctx, grad):
    return grad  # the engine sums it back to the input's shape


@derivative("squeeze", save=_shape,
            name=lambda input, dim=None: "SqueezeBackward0" if dim is None else "SqueezeBackward1")
def squeeze(ctx, grad, shape):
    return grad.reshape(shape)


@derivative("unsqueeze", save=_shape)
def unsqueeze(ctx, grad, shape):
    return grad.reshape(shape)


@derivative("permute", save=lambda input, *dims: (dims,))
def permute(ctx, grad, dims):
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = tuple(dims[0])
    ndim = len(dims)
    inverse = [0] * ndim
    for i, d in enumerate(dims):
        inverse[d % ndim] = i
    return grad.permute(inverse)


@derivative("transpose", save=lambda input, dim0, dim1: (dim0, dim1))
def transpose(ctx, grad, dim0, dim1):
    return grad.transpose(dim0, dim1) if grad.dim() else grad


@derivative("t", name="TBackward0")
def t(ctx, grad):
    return grad.t()


@derivative("narrow", name="SliceBackward0",
            save=lambda input, dim, start, length: (input._data.shape, dim, start, length))
def narrow(ctx, grad, shape, dim, start, length):
    return _embed(grad, shape, lambda z: z.narrow(dim, start, length))


def _split_save(input, split_size_or_sections, dim=0):
    # The pieces' sizes along `dim` (PyTorch's: int pieces of that size, the last one
    # shorter; a list gives them), so that a piece with no gradient becomes zeros.
    shape = input._data.shape
    dim = dim % len(shape) if shape else 0
    size = shape[dim] if shape else 1
    if isinstance(split_size_or_sections, int):
        step = split_size_or_sections
        sizes = [min(step, size - start) for start in range(0, size, step)] if step and size else [size]
    else:
        sizes = list(split_size_or_sections)
    return shape, dim, sizes


@derivative("split", save=_split_save, name=lambda input, split_size_or_sections, dim=0:
            "SplitBackward0" if isinstance(split_size_or_sections, int) else "SplitWithSizesBackward0")
def split(ctx, grads, shape, dim, sizes):
    # One node for all the pieces, as PyTorch's SplitBackward0: the input's gradient is
    # one cat of the pieces' gradients, not a zero-padded copy per piece that the engine
    # then adds up (attention's packed q, k, v projection: 3 zeros, 3 copies, 2 adds).
    if not shape:
        return grads[0]
    template = next(g for g in grads if g is not None)
    pieces = [g if g is not None else template.new_zeros(shape[:dim] + (n,) + shape[dim + 1:])
              for g, n in zip(grads, sizes)]
    return pieces[0] if len(pieces) == 1 else E.cat(pieces, dim)


@derivative("select", save=lambda input, dim, index: (input._data.shape, dim, index))
def select(ctx, grad, shape, dim, index):
    return _embed(grad, shape, lambda z: z.select(dim, index))


@derivative("diagonal", save=lambda input, offset=0, dim1=0, dim2=1: (input._data.shape, offset, dim1, dim2))
def diagonal(ctx, grad, shape, offset, dim1, dim2):
    return _embed(grad, shape, lambda z: z.diagonal(offset, dim1, dim2))


@derivative("unfold", save=lambda input, dimension, size, step: (input._data.shape, dimension, size, step))
def unfold(ctx, grad, shape, dimension, size, step):
    # Windows overlap when step < size: their gradients add up.
    positions = element_positions(shape).unfold(dimension, size, step)
    return scatter_add_flat(grad, positions, shape)


@derivative("as_strided", save=lambda input, size, stride, storage_offset=None: (
    input._data.shape, input.stride(), input.storage_offset(), tuple(size), tuple(stride),
    input.storage_offset() if storage_offset is None else storage_offset))
def as_strided(ctx, grad, shape, strides, offset, size, stride, view_offset):
    positions = _as_strided_positions(shape, strides, offset, size, stride, view_offset)
    return scatter_add_flat(grad, E.from_numpy(positions).to(grad.device), shape)


def _storage_offsets(shape, strides, offset):
    offsets = np.full(tuple(shape), offset, dtype=np.int64)
    for d, (n, s) in enumerate(zip(shape, strides)):
        idx = np.arange(n, dtype=np.int64) * s
        offsets = offsets + idx.reshape((n,) + (1,) * (len(shape) - d - 1))
    return offsets


def _as_strided_positions(shape, strides, offset, size, stride, view_offset):
    """For each element of the as_strided view, the flat position of the input element at
    the same memory location."""
    input_at = _storage_offsets(shape, strides, offset).reshape(-1)
    view_at = _storage_offsets(size, stride, view_offset)
    lookup = np.full(int(max(input_at.max(initial=0), view_at.max(initial=0))) + 1, -1, dtype=np.int64)
    lookup[input_at] = np.arange(input_at.size, dtype=np.int64)
    positions = lookup[view_at]
    if (positions < 0).any():
        raise RuntimeError("as_strided: the view reaches memory outside of its input; its "
                           "gradient is not defined")
    return positions


# The in-place shape ops share their view op's formula; the recorder moves the tensor's own
# history on and leaves its base's alone (its storage is not written).
derivative("unsqueeze_", save=_shape, name="UnsqueezeBackward1")(unsqueeze)
derivative("squeeze_", save=_shape, name=lambda self, dim=None: (
    "SqueezeBackward3" if dim is None else "SqueezeBackward5" if isinstance(dim, (tuple, list))
    else "SqueezeBackward4"))(squeeze)
derivative("transpose_", save=lambda self, dim0, dim1: (dim0, dim1), name="TransposeBackward1")(transpose)
derivative("t_", name="TBackward1")(t)
derivative("as_strided_", name="AsStridedBackward1", save=lambda self, size, stride, storage_offset=None: (
    self._data.shape, self.stride(), self.storage_offset(), tuple(size), tuple(stride),
    self.storage_offset() if storage_offset is None else storage_offset))(as_strided)

composite("reshape", "flatten", "unflatten", "movedim", "chunk", "tensor_split", "unbind", "ravel",
          "hsplit", "vsplit", "dsplit")
not_differentiable("view_dtype", "detach", "detach_", "resize_")
# The scatters into a view are clone + copy_ into that view of the clone.
composite("select_scatter", "slice_scatter", "diagonal_scatter")
