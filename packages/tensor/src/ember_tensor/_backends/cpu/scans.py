"""CPU scans along a dim: running sums and products, running max/min, logcumsumexp.

Arrays in, arrays out: `a` in its storage dtype, `dim` already wrapped (a 0-d array is
one line of one element). Each scan runs a Numba row kernel (`kernels.index`) over the
lines along `dim` laid out as a C-contiguous (rows, n) array (`lines.rows_of`). Floats
accumulate in float64 and integers in int64 (PyTorch's CPU accumulation types), then
the result is cast to its dtype. Numba lacks float16/bfloat16: those go through float32.
"""
import ml_dtypes
import numpy as np

from ..lazy import lazy
from .lines import from_rows, rows_of

__all__ = ["accumulate", "extreme", "logcumsumexp"]

K = lazy("cpu.kernels.index")  # Numba loads on first use

_LOW = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))


def _is_float(dtype):
    return dtype.kind == "f" or dtype in _LOW


def _compute_dtype(dtype):
    """The dtype a kernel reads and writes for `dtype`: float32 for the half types."""
    return np.dtype(np.float32) if dtype in _LOW else dtype


def accumulate(a, dim, is_prod, result_dtype):
    """Running sums (products when `is_prod`) of `a` along `dim`, as a `result_dtype` array.

    >>> accumulate(np.array([1, 2, 3]), 0, False, np.dtype(np.int64))
    array([1, 3, 6])
    """
    result_dtype = np.dtype(result_dtype)
    floating = _is_float(result_dtype) or result_dtype.kind == "c"
    acc_np = np.complex128 if result_dtype.kind == "c" else np.float64 if floating else np.int64
    # The kernel reads the input's dtype and writes the result's directly (no extra
    # passes); Numba lacks float16/bfloat16, which go through float32.
    read_np = np.float32 if a.dtype in _LOW else None
    write_dtype = _compute_dtype(result_dtype)
    rows = rows_of(a, dim, read_np)
    if not floating and rows.dtype.kind == "f":
        rows = rows.astype(np.int64)  # cumsum(float, dtype=int): PyTorch converts first
    scanned = np.empty(rows.shape, write_dtype)
    if rows.size:
        (K.cumprod_rows if is_prod else K.cumsum_rows)(rows, acc_np(1 if is_prod else 0), scanned)
    values = from_rows(scanned, tuple(a.shape), dim)
    if write_dtype != result_dtype:
        values = values.astype(result_dtype)
    return values


def extreme(a, dim, take_max):
    """(values, int64 indices): the running max (min) of `a` along `dim` and where it was
    last reached (an equal value moves the index forward; a NaN sticks once seen).

    >>> extreme(np.array([1, 3, 2]), 0, True)[0]
    array([1, 3, 3])
    """
    work = np.dtype(np.uint8) if a.dtype == np.bool_ else _compute_dtype(a.dtype)
    rows = rows_of(a, dim, work)
    values = np.empty_like(rows)
    indices = np.empty(rows.shape, np.int64)
    if rows.size:
        K.cumextreme_rows(rows, take_max, values, indices)
    shape = tuple(a.shape)
    return from_rows(values, shape, dim).astype(a.dtype), from_rows(indices, shape, dim)


def logcumsumexp(a, dim):
    """log(cumsum(exp(a))) along `dim`, computed stably in float64 (complex128 for complex
    `a`), in `a`'s dtype.

    >>> logcumsumexp(np.array([0., 0.]), 0)
    array([0.        , 0.69314718])
    """
    complex_ = np.dtype(a.dtype).kind == "c"
    rows = rows_of(a, dim, np.complex128 if complex_ else np.float64)
    scanned = np.empty_like(rows)
    if rows.size:
        (K.logcumsumexp_rows_complex if complex_ else K.logcumsumexp_rows)(rows, scanned)
    return from_rows(scanned, tuple(a.shape), dim).astype(a.dtype)
