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

__all__ = ["softmax"]


def softmax(x, dim, log):
    """softmax(x) along `dim` (log: log_softmax) of a float32/float64 device array, as
    a C-contiguous array of x's dtype; a 0-d `x` is one row of one element."""
    shape = tuple(x.shape) or (1,)
    size = shape[dim]
    inner = 1
    for n in shape[dim + 1:]:
        inner *= n
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
