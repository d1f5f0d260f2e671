"""CPU searching and counting: unique, unique_consecutive, searchsorted, bincount, histc.

Arrays in, arrays out. unique and searchsorted run NumPy (its sorts and binary search in
C); histc and bincount run Numba counting loops (`kernels.index`). The readers
(`smallest`, `index_range`, `data_range`) return the numbers an op needs to check its
arguments or size its result, as Python numbers.
"""
import ml_dtypes
import numpy as np

from ..lazy import lazy

__all__ = ["unique", "searchsorted", "index_range", "smallest", "data_range", "histc", "bincount"]

K = lazy("cpu.kernels.index")  # Numba loads on first use

_BF16 = np.dtype(ml_dtypes.bfloat16)
_LOW = (np.dtype(np.float16), _BF16)


def unique(a, dim, consecutive):
    """(values, inverse, counts): the distinct values of `a` (slices along `dim` when it is
    not None) sorted, or its runs of equal consecutive values (`consecutive`); int64
    inverse shaped like `a` (along `dim`: one per slice) and int64 counts.

    Along `dim`, every slice has elements (the op answers empty inputs).

    >>> unique(np.array([3, 1, 1]), None, False)
    (array([1, 3]), array([1, 0, 0]), array([2, 1]))
    """
    if consecutive:
        return _unique_consecutive(a, dim)
    if dim is None:
        values, inverse, counts = np.unique(a.reshape(-1), return_inverse=True, return_counts=True)
        inverse = inverse.reshape(a.shape)
    else:
        values, inverse, counts = np.unique(a, return_inverse=True, return_counts=True, axis=dim)
        inverse = inverse.reshape(-1)
    return values, inverse.astype(np.int64, copy=False), counts.astype(np.int64, copy=False)


def _unique_consecutive(a, dim):
    if dim is None:
        lines = a.reshape(-1, 1)
        inverse_shape = a.shape
    else:
        lines = np.moveaxis(a, dim, 0).reshape(a.shape[dim] if a.ndim else 1, -1)
        inverse_shape = (-1,)
    if len(lines) == 0:
        starts = np.zeros(0, np.int64)
    else:
        changed = np.any(lines[1:] != lines[:-1], axis=1)
        starts = np.concatenate(([0], np.nonzero(changed)[0] + 1))
    counts = np.diff(np.append(starts, len(lines)))
    inverse = np.repeat(np.arange(len(starts)), counts)
    if dim is None:
        values = a.reshape(-1)[starts]
    else:
        values = np.take(a, starts, axis=dim)
    return values, inverse.reshape(inverse_shape).astype(np.int64, copy=False), counts.astype(np.int64, copy=False)


def _comparable(arr):
    # NumPy misorders bfloat16 NaN (ml_dtypes): compare as float32, exact for bfloat16.
    return arr.astype(np.float32) if arr.dtype == _BF16 else arr


def searchsorted(seq, values, right, sorter, out_int32):
    """Insertion points of `values` in the rows of `seq` (1-d, or a batch of rows matching
    `values`' leading dims, checked by the op), read in `sorter`'s order when it is given;
    int32 (`out_int32`) or int64, shaped like `values` (a 0-d array for one number).

    >>> searchsorted(np.array([1, 3, 5, 7]), np.array([3, 6, 9]), False, None, False)
    array([1, 3, 4])
    """
    seq = _comparable(seq)
    if sorter is not None:
        seq = np.take_along_axis(seq, sorter, axis=-1)
    values = _comparable(values)
    side = "right" if right else "left"
    if seq.ndim == 1:
        found = np.searchsorted(seq, values, side=side)
    else:
        flat_seq, flat_vals = seq.reshape(-1, seq.shape[-1]), values.reshape(-1, values.shape[-1])
        found = np.stack([np.searchsorted(s, v, side=side) for s, v in zip(flat_seq, flat_vals)])
        found = found.reshape(values.shape)
    return np.asarray(found, dtype=np.int32 if out_int32 else np.int64)


def index_range(a):
    """(min, max) of the non-empty integer array `a`, as Python ints."""
    return int(a.min()), int(a.max())


def smallest(a):
    """The smallest value of the non-empty integer array `a`, as a Python int."""
    return int(a.min())


def data_range(a):
    """(min, max) of the non-empty float array `a`, as Python floats (NaN if it has one)."""
    # float32 holds every half value exactly, and NumPy's min of float32 is vectorised.
    values = a.astype(np.float32) if a.dtype in _LOW else a
    return float(values.min()), float(values.max())


def histc(a, bins, lo, hi):
    """Histogram of `a` in `bins` equal bins over [lo, hi] (finite, lo < hi), values outside
    ignored, in `a`'s dtype.

    >>> histc(np.array([1., 2., 1.]), 4, 0.0, 3.0)
    array([0., 2., 1., 0.])
    """
    counts = np.zeros(bins, np.float64)
    K.histc(a.reshape(-1).astype(np.float64), lo, hi, counts)
    return counts.astype(a.dtype)


def bincount(a, weights, minlength, result_dtype):
    """Counts of the values 0..max(a) of the 1-d non-negative integer array `a` (int64), or
    the sums of `weights` at them (`result_dtype`); at least `minlength` bins.

    >>> bincount(np.array([0, 1, 1, 3]), None, 0, np.dtype(np.int64))
    array([1, 2, 0, 1])
    """
    values = a.astype(np.int64)
    size = max(int(values.max()) + 1 if values.size else 0, minlength)
    if weights is None:
        counts = np.zeros(size, np.int64)
        K.bincount(values, np.zeros(0, np.int64), counts)
        return counts
    counts = np.zeros(size, np.float64)
    K.bincount(values, weights.astype(np.float64), counts)
    return counts.astype(result_dtype)
