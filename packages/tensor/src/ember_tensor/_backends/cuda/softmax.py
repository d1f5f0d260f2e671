"""CUDA softmax and log_softmax along one dim: the same function as `_backends.cpu.softmax`
over device arrays.

A block per row when `dim` is the last (the common case), a thread per column
otherwise, so that neighbouring threads read neighbouring memory (`kernels.softmax`).
The row's max and sum merge in float64; float32 inputs take float32's exp.
"""
import numpy as np

from . import storage
from .kernels import softmax as K
from .rows import flat_operand, launch_flat, launch_rows, shaped

__all__ = ["softmax", "softmax_backward"]


def _sizes(x, dim):
    """(size, inner) of x viewed as (outer, size, inner), softmax running along size."""
    shape = tuple(x.shape) or (1,)
    inner = 1
    for n in shape[dim + 1:]:
        inner *= n
    return shape[dim], inner


def softmax(x, dim, log):
    """softmax(x) along `dim` (log: log_softmax) of a float32/float64 device array, as
    a C-contiguous array of x's dtype; a 0-d `x` is one row of one element."""
    size, inner = _sizes(x, dim)
    flat = flat_operand(x)
    y = storage.empty((flat.size,), flat.dtype)
    single = flat.dtype == np.float32
    if flat.size:
        if inner == 1:
            launch_rows(K.softmax_rows, flat.size // size, size, flat, y, flat.size // size, size, log, single)
        else:
            outer = flat.size // (size * inner)
            launch_flat(K.softmax_columns, outer * inner, flat, y, outer, size, inner, log, single)
    return shaped(y, x.shape)


def softmax_backward(grad_output, output, dim, log):
    """d softmax / d x (log: of log_softmax) along `dim`, from the gradient of the output
    and the output itself (device arrays of one float dtype and shape)."""
    size, inner = _sizes(output, dim)
    g, y = flat_operand(grad_output), flat_operand(output)
    gx = storage.empty((y.size,), y.dtype)
    single = y.dtype == np.float32
    if y.size:
        if inner == 1:
            launch_rows(K.softmax_backward_rows, y.size // size, size, g, y, gx, y.size // size, size, log, single)
        else:
            outer = y.size // (size * inner)
            launch_flat(K.softmax_backward_columns, outer * inner, g, y, gx, outer, size, inner, log, single)
    return shaped(gx, output.shape)
