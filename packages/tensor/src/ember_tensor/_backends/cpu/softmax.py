"""CPU softmax and log_softmax along one dim, max-subtracted so that they never overflow.

Arrays in, arrays out: `x` is a float32/float64 array (half types arrive as float32)
of any strides, `dim` already wrapped; the result is a C-contiguous array of x's dtype.
NumPy's vectorised expressions are as fast as a Numba loop here: no kernel of our own.
"""
import numpy as np

__all__ = ["softmax"]


def _shifted(x, dim):
    peak = x.max(axis=dim, keepdims=True) if x.size else x
    # An all -inf slice must give NaN, like PyTorch; shifting by -inf does that anyway.
    return x - peak


def softmax(x, dim, log):
    """softmax(x) along `dim` (log: log_softmax); a 0-d `x` is one row of one element.

    >>> softmax(np.zeros(2, np.float32), 0, False)
    array([0.5, 0.5], dtype=float32)
    """
    if x.ndim == 0:  # 1 (log: 0), or NaN for an infinite or NaN x, as PyTorch
        with np.errstate(invalid="ignore"):
            if log:
                return np.asarray(x - x)
            e = np.exp(x - x)
            return np.asarray(e / e)
    s = _shifted(x, dim)
    if log:
        with np.errstate(divide="ignore"):
            out = s - np.log(np.exp(s).sum(axis=dim, keepdims=True))
    else:
        e = np.exp(s)
        out = e / e.sum(axis=dim, keepdims=True)
    return np.ascontiguousarray(out)
