"""``ember.reduce_kernel``: a reduction from a scalar combine function and its identity.

    >>> import ember_tensor as torch
    >>> @torch.reduce_kernel(identity=float("-inf"))
    ... def running_max(acc, x):
    ...     return x if x > acc else acc
    >>> running_max(torch.tensor([[1.0, 5.0], [3.0, 2.0]]), dim=1)
    tensor([5., 3.])

The op reduces over every element (``dim=None``) or over ``dim`` (an int or a tuple), with
``keepdim``, on the CPU (parallel over the kept elements) and on CUDA (a thread per kept
element). ``combine`` must be associative; the reduction order is not specified.
"""
import functools

import numpy as np

from .. import _backends, _dispatch
from .. import _dtype as D
from .._tensor import Tensor
from .._ops import _iter

__all__ = ["reduce_kernel"]


def _reduced_dims(dim, ndim):
    if dim is None:
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    result = []
    for d in dims:
        if not -max(ndim, 1) <= d < max(ndim, 1):
            raise IndexError(f"Dimension out of range (expected to be in range of [{-max(ndim, 1)}, "
                             f"{max(ndim, 1) - 1}], but got {d})")
        d = d % max(ndim, 1)
        if d in result:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        result.append(d)
    return tuple(sorted(result)) if ndim else ()


class ReduceKernel:
    """One user reduction: its op (its backends keep the compiled loops)."""

    def __init__(self, combine, identity, name):
        self.combine = combine
        self.identity = identity
        self.name = name or combine.__name__

        def call(input, dim=None, keepdim=False):
            return _reduce_impl(self, input, dim, keepdim)

        call.__doc__ = combine.__doc__
        self.op = _dispatch.Operator(f"custom::{self.name}", call)
        self.op.__name__ = self.op.__qualname__ = self.name
        self.op.kernel = self
        _dispatch._OPERATORS[self.op.name] = self.op


def _reduce_impl(custom, input, dim=None, keepdim=False):
    if not isinstance(input, Tensor):
        raise TypeError(f"{custom.name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    ndim = input.dim()
    dims = _reduced_dims(dim, ndim)
    kept = [d for d in range(ndim) if d not in dims]
    dtype = _iter.compute_dtype(input.dtype)
    # Reduced dims last, as a (kept elements, reduced elements) matrix.
    x = input.permute(*kept, *dims).contiguous() if ndim else input.reshape(1)
    if x.dtype is not dtype:
        x = x.to(dtype)
    outer = int(np.prod([input.shape[d] for d in kept])) if kept else 1
    inner = x.numel() // outer if outer else 0
    matrix = x.reshape(outer, inner)
    result = Tensor._wrap(_run(custom, matrix, outer, dtype), dtype, input.device)
    if result.dtype is not input.dtype and input.dtype.is_floating_point:
        result = result.to(input.dtype)
    shape = [1 if d in dims else input.shape[d] for d in range(ndim)] if keepdim else [input.shape[d] for d in kept]
    return result.reshape(shape)


def _run(custom, matrix, outer, dtype):
    backend = _backends.get(matrix.device)
    out = backend.storage.empty((outer,), dtype.np)
    if outer == 0:
        return out
    identity = _typed_identity(custom.identity, dtype)
    return backend.custom.launch_reduce(custom.combine, matrix._data, out, identity)


def _typed_identity(identity, dtype):
    """``identity`` as a value of ``dtype``; an infinite one is the integer dtype's extreme."""
    if not dtype.is_floating_point and isinstance(identity, float) and np.isinf(identity):
        info = np.iinfo(dtype.np) if dtype is not D.bool else None
        if info is None:
            return np.bool_(identity > 0)
        return dtype.np.type(info.max if identity > 0 else info.min)
    return dtype.np.type(identity)


def reduce_kernel(combine=None, *, identity, name=None):
    """Turn ``combine(acc, x) -> acc`` into a reduction op ``op(input, dim=None, keepdim=False)``.

    Args:
        combine: an associative scalar function of the running value and one element.
        identity: the starting value (0 for a sum, -inf for a max, ...).
        name: the op's name (default: the function's); registered as ``custom::<name>``.
    """
    if combine is None:
        return functools.partial(reduce_kernel, identity=identity, name=name)
    return ReduceKernel(combine, identity, name).op

