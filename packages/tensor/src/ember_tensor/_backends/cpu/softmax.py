"""CPU softmax and log_softmax along one dim, and their backward, max-subtracted so that
they never overflow.

Arrays in, arrays out: `x` is a float32/float64 array (half types arrive as float32)
of any strides, `dim` already wrapped; results are C-contiguous arrays of x's dtype.
The work is done by the Numba row kernels of `kernels.softmax` (one task per row, or
per block of columns for a non-last dim), which read the input twice: NumPy's
expression took six passes and a scalar exp.
"""
import math

import numpy as np

from ..lazy import lazy

__all__ = ["softmax", "softmax_backward"]

K = lazy("cpu.kernels.softmax")  # Numba loads on first use


def _three_d(a, dim):
    """`a` as a C-contiguous (outer, size, inner) array, softmax running along size."""
    shape = a.shape or (1,)
    # math.prod, not np.prod: NumPy's makes an array of the tuple first (~3 us a call,
    # a fifth of a small softmax's whole time).
    outer = math.prod(shape[:dim])
    inner = math.prod(shape[dim + 1:])
    return np.ascontiguousarray(a).reshape(outer, shape[dim], inner)


def softmax(x, dim, log):
    """softmax(x) along `dim` (log: log_softmax); a 0-d `x` is one row of one element.

    >>> softmax(np.zeros(2, np.float32), 0, False)
    array([0.5, 0.5], dtype=float32)
    """
    return K.softmax_forward(_three_d(x, dim), log).reshape(x.shape)


def softmax_backward(grad_output, output, dim, log):
    """d softmax / d x (log: of log_softmax) along `dim`, from the gradient of the
    output and the output itself (both of one float dtype and shape)."""
    g = _three_d(grad_output, dim)
    return K.softmax_backward(g, _three_d(output, dim), log).reshape(output.shape)
