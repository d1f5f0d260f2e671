"""CPU sorting and selection along a dim: sort, argsort, top-k, k-th value, nanmedian, mode.

Arrays in, arrays out: `a` in its storage dtype, `dim` already wrapped (0-d arrays have
one line of one element). Sorting uses NumPy's stable sort (a radix/timsort in C): a
Numba loop would only re-implement it more slowly, so the kernels here are the counting
loops (mode, top-k). Each function works on the lines along `dim` laid out as a
C-contiguous (rows, n) array (`lines.rows_of`) and puts the result back in place.
Orders are PyTorch's: stable (equal values keep their order), NaN as the largest value.
"""
import ml_dtypes
import numpy as np

from ..lazy import lazy
from .lines import from_rows, rows_of

__all__ = ["sort", "argsort", "topk", "select", "mode"]

K = lazy("cpu.kernels.index")  # Numba loads on first use

_LOW = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))


def _sort_keys(rows):
    # NumPy cannot order bfloat16 reliably: compare as float32 (exact for both halves).
    return rows.astype(np.float32) if rows.dtype in _LOW else rows


def _order_preserving_uint32(keys):
    """uint32 codes of 32-bit-or-smaller keys, ordered like PyTorch orders the keys: NaN as
    the largest value (one canonical NaN), -0.0 equal to 0.0."""
    if keys.dtype.kind == "f":
        canonical = np.where(np.isnan(keys), np.float32(np.nan), keys + np.float32(0)).astype(np.float32)
        bits = canonical.view(np.uint32)
        return np.where(bits >> 31, ~bits, bits | np.uint32(0x80000000))
    if keys.dtype.kind == "i":
        return (keys.astype(np.int64) + (1 << 31)).astype(np.uint32)
    return keys.astype(np.uint32)


def stable_argsort_rows(rows, descending):
    """Stable argsort of each row; NaN sorts as the largest value (PyTorch's order)."""
    keys = _sort_keys(rows)
    n = keys.shape[1]
    if keys.size <= 4096 and not descending:
        return np.argsort(keys, axis=1, kind="stable")  # small: fewer NumPy calls wins
    if keys.dtype.itemsize <= 4 and keys.dtype.kind in "fiub" and n < (1 << 32):
        # Each key and its index packed into one uint64 are all distinct, so any sort is
        # stable: NumPy's SIMD sort of uint64 is ~10x faster than its stable argsort.
        codes = _order_preserving_uint32(keys)
        if descending:
            codes = ~codes
        packed = (codes.astype(np.uint64) << np.uint64(32)) | np.arange(n, dtype=np.uint64)
        packed.sort(axis=1)
        return (packed & np.uint64(0xFFFFFFFF)).astype(np.int64)
    if not descending:
        return np.argsort(keys, axis=1, kind="stable")
    # Descending and still stable: sort the reversed row ascending and read it backwards.
    return (n - 1) - np.argsort(keys[:, ::-1], axis=1, kind="stable")[:, ::-1]


def top_k_order(rows, k, largest):
    """Column indices of each row's k largest (smallest) values, in sorted order, equal to
    the first k of the stable sort's order.

    Small k: one Numba pass with a sorted buffer of k entries. Otherwise a partition finds
    each row's k-th value in O(n) and only the k chosen values are then sorted; rows with
    NaN, bool rows and large k take the full stable sort.
    """
    keys = _sort_keys(rows)
    n = keys.shape[1]
    if 0 < k <= 32 and 4 * k <= n:
        # Few values wanted: one pass keeping a sorted buffer of k column indices.
        order = np.empty((len(keys), k), np.int64)
        K.topk_rows(keys.view(np.uint8) if keys.dtype == np.bool_ else keys, k, largest, order)
        return order
    if k == 0 or 4 * k > n or keys.dtype == np.bool_ or (keys.dtype.kind == "f" and np.isnan(keys).any()):
        return stable_argsort_rows(rows, largest)[:, :k]
    kth = n - k if largest else k - 1
    threshold = np.partition(keys, kth, axis=1)[:, kth:kth + 1]
    strict = keys > threshold if largest else keys < threshold
    tied = keys == threshold
    # Of the values equal to the threshold, the first ones (by index) fill the k places,
    # as a stable sort would choose them.
    missing = k - strict.sum(axis=1, keepdims=True)
    if (tied.sum(axis=1, keepdims=True) != missing).any():
        tied &= np.cumsum(tied, axis=1) <= missing
    columns = np.nonzero(strict | tied)[1].reshape(len(keys), k)
    chosen = np.take_along_axis(keys, columns, axis=1)
    return np.take_along_axis(columns, stable_argsort_rows(chosen, largest), axis=1)


def _shape_with(a, dim, n):
    shape = list(a.shape)
    if shape:
        shape[dim] = n
    return tuple(shape)


def sort(a, dim, descending):
    """(values, int64 indices) of `a` sorted stably along `dim`."""
    rows = rows_of(a, dim)
    order = stable_argsort_rows(rows, descending)
    values = np.take_along_axis(rows, order, axis=1)
    return from_rows(values, a.shape, dim), from_rows(order, a.shape, dim)


def argsort(a, dim, descending):
    """The int64 indices that sort `a` stably along `dim`."""
    return from_rows(stable_argsort_rows(rows_of(a, dim), descending), a.shape, dim)


def topk(a, k, dim, largest):
    """(values, indices): the first k of the stable sort along `dim` (descending when
    `largest`), PyTorch's top-k order with ties by index."""
    rows = rows_of(a, dim)
    order = top_k_order(rows, k, largest)
    values = np.take_along_axis(rows, order, axis=1)
    shape = _shape_with(a, dim, k)
    return from_rows(values, shape, dim), from_rows(order, shape, dim)


def _lower_median_ignoring_nan(rows, order):
    # NaN sorts last: a row's non-NaN count says where its lower median is.
    if rows.dtype.kind in "iub":
        valid = np.full(len(rows), rows.shape[1])
    else:
        valid = (~np.isnan(rows.astype(np.float64))).sum(axis=1)
    return np.maximum(valid - 1, 0) // 2


def select(a, dim, how, k=0):
    """(values, indices) with size 1 at `dim`: the (k+1)-th smallest ("kth") or the lower
    median ignoring NaN ("nanmedian") of each line."""
    rows = rows_of(a, dim)
    order = stable_argsort_rows(rows, False)
    if how == "kth":
        positions = np.full(len(rows), k)
    else:
        positions = _lower_median_ignoring_nan(rows, order)
    chosen = np.take_along_axis(order, positions[:, None], axis=1)
    values = np.take_along_axis(rows, chosen, axis=1)
    shape = _shape_with(a, dim, 1)
    return from_rows(values, shape, dim), from_rows(chosen, shape, dim)


def mode(a, dim):
    """(values, indices) with size 1 at `dim`: each line's smallest most frequent value
    and the index of its last occurrence."""
    rows = rows_of(a, dim)
    order = stable_argsort_rows(rows, False)
    keys = _sort_keys(rows)
    sorted_keys = np.ascontiguousarray(np.take_along_axis(keys, order, axis=1))
    chosen = np.empty((len(rows), 1), np.int64)
    if rows.size:
        K.mode_rows(sorted_keys.view(np.uint8) if sorted_keys.dtype == np.bool_ else sorted_keys,
                    np.ascontiguousarray(order), chosen)
    values = np.take_along_axis(rows, chosen, axis=1)
    shape = _shape_with(a, dim, 1)
    return from_rows(values, shape, dim), from_rows(chosen, shape, dim)
