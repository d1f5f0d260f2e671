"""Sorting and selection: sort, argsort, msort, topk, kthvalue, nanmedian, mode (and, from
`counting`, unique, unique_consecutive, searchsorted, bucketize, histc, bincount).

On the CPU, sorting uses NumPy's stable sort (a radix/timsort in C): a Numba loop would
only re-implement it more slowly, so the kernels here are the counting loops (mode,
top-k). Each op works on the lines along `dim` laid out as a C-contiguous (rows, n)
array (`_strided.rows_of`) and puts the result back in place with `from_rows`. CUDA
tensors sort on the device (`_backends.cuda.sorting`: a bitonic sort of order codes), after the
same argument checks. median itself lives with the reductions.
"""
import numpy as np

from .. import _dtype as D
from .._dispatch import op
from .._tensor import wrap_dim
from .._backends.lazy import lazy, lazy_module

K = lazy("cpu.kernels.index")  # Numba loads on first use
CS = lazy_module("ember_tensor._backends.cuda.sorting")  # CUDA tensors: device kernels, loaded on first use
from . import _iter
from ._strided import from_rows, host, rows_of, wrap
from .reduction import _pair, return_types
from .counting import bincount, bucketize, histc, searchsorted, unique, unique_consecutive  # noqa: F401

__all__ = ["sort", "argsort", "msort", "topk", "top_k_order", "stable_argsort_rows", "kthvalue", "nanmedian", "mode", "unique",
           "unique_consecutive", "searchsorted", "bucketize", "histc", "bincount"]


def _sort_keys(rows, dtype):
    # NumPy cannot order bfloat16 reliably: compare as float32 (exact for both halves).
    return rows.astype(np.float32) if dtype in _iter.LOW_PRECISION else rows


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


def stable_argsort_rows(rows, dtype, descending):
    """Stable argsort of each row; NaN sorts as the largest value (PyTorch's order)."""
    keys = _sort_keys(rows, dtype)
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


def _sorted_lines(input, dim, descending):
    """(dim, rows, order): rows of `input` along `dim` and their stable sort order."""
    ndim = input._data.ndim
    dim = wrap_dim(dim, max(ndim, 1))
    rows = rows_of(host(input), dim) if ndim else host(input).reshape(1, 1)
    return dim, rows, stable_argsort_rows(rows, input._dtype, descending)


def _back(rows, input, dim, dtype=None, n=None):
    shape = list(input._data.shape)
    if shape and n is not None:
        shape[dim] = n
    return wrap(from_rows(rows, tuple(shape), dim), dtype or input._dtype, input._device)


@op()
def sort(input, dim=-1, descending=False, stable=False, *, out=None):
    """(values, indices) of `input` sorted along `dim` (always stable: equal values keep
    their order, NaN counts as largest).

    >>> sort(tensor([3, 1, 2])).indices
    tensor([1, 2, 0])
    """
    if input._device.type == "cuda":
        values, indices = CS.sort(input, wrap_dim(dim, max(input._data.ndim, 1)), descending)
        return _pair(return_types.sort, values, indices, out)
    dim, rows, order = _sorted_lines(input, dim, descending)
    values = np.take_along_axis(rows, order, axis=1)
    return _pair(return_types.sort, _back(values, input, dim), _back(order, input, dim, D.int64), out)


@op()
def argsort(input, dim=-1, descending=False, stable=False):
    """Indices that sort `input` along `dim` (see `sort`).

    >>> argsort(tensor([3, 1, 2]), descending=True)
    tensor([0, 2, 1])
    """
    if input._device.type == "cuda":
        return CS.argsort(input, wrap_dim(dim, max(input._data.ndim, 1)), descending)
    dim, _, order = _sorted_lines(input, dim, descending)
    return _back(order, input, dim, D.int64)


def msort(input):
    """`input` sorted along its first dim.

    >>> msort(tensor([[2, 1], [1, 3]]))
    tensor([[1, 1],
            [2, 3]])
    """
    return sort(input, 0).values


@op()
def topk(input, k, dim=-1, largest=True, sorted=True, *, out=None):  # noqa: A002 - PyTorch's name
    """The `k` largest (or smallest) values along `dim` and their indices, in order.

    >>> topk(tensor([1., 4., 2., 3.]), 2)
    torch.return_types.topk(
    values=tensor([4., 3.]),
    indices=tensor([1, 3]))
    """
    ndim = input._data.ndim
    size = input._data.shape[wrap_dim(dim, max(ndim, 1))] if ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    dim = wrap_dim(dim, max(ndim, 1))
    if input._device.type == "cuda":
        return _pair(return_types.topk, *CS.topk(input, k, dim, largest), out)
    rows = rows_of(host(input), dim) if ndim else host(input).reshape(1, 1)
    order = top_k_order(rows, input._dtype, k, largest)
    values = np.take_along_axis(rows, order, axis=1)
    return _pair(return_types.topk, _back(values, input, dim, n=k),
                 _back(order, input, dim, D.int64, n=k), out)


def top_k_order(rows, dtype, k, largest):
    """Column indices of each row's k largest (smallest) values, in sorted order, equal to
    the first k of the stable sort's order.

    Small k: one Numba pass with a sorted buffer of k entries. Otherwise a partition finds
    each row's k-th value in O(n) and only the k chosen values are then sorted; rows with
    NaN, bool rows and large k take the full stable sort.
    """
    keys = _sort_keys(rows, dtype)
    n = keys.shape[1]
    if 0 < k <= 32 and 4 * k <= n:
        # Few values wanted: one pass keeping a sorted buffer of k column indices.
        order = np.empty((len(keys), k), np.int64)
        K.topk_rows(keys.view(np.uint8) if keys.dtype == np.bool_ else keys, k, largest, order)
        return order
    if k == 0 or 4 * k > n or keys.dtype == np.bool_ or (keys.dtype.kind == "f" and np.isnan(keys).any()):
        return stable_argsort_rows(rows, dtype, largest)[:, :k]
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
    return np.take_along_axis(columns, stable_argsort_rows(chosen, None, largest), axis=1)


def _check_nonempty_dim(input, dim, name):
    if input._data.ndim and not input._data.shape[dim]:
        raise IndexError(f"{name}(): Expected reduction dim {dim} to have non-zero size.")


def _select_position(input, dim, keepdim, position_of_row, cls, out, device_how, k=0):
    """(values, indices) at sorted position `position_of_row(rows, order)` of each line
    (on CUDA: the position `_backends.cuda.sorting.select` finds for `device_how` and `k`)."""
    if input._device.type == "cuda":
        dim = wrap_dim(dim, max(input._data.ndim, 1))
        values, chosen = CS.select(input, dim, device_how, k)
    else:
        dim, rows, order = _sorted_lines(input, dim, False)
        positions = position_of_row(rows, order)[:, None]
        chosen = np.take_along_axis(order, positions, axis=1)
        values = np.take_along_axis(rows, chosen, axis=1)
        values, chosen = _back(values, input, dim, n=1), _back(chosen, input, dim, D.int64, n=1)
    if not keepdim and input._data.ndim:
        values, chosen = values.squeeze(dim), chosen.squeeze(dim)
    return _pair(cls, values, chosen, out)


@op()
def kthvalue(input, k, dim=-1, keepdim=False, *, out=None):
    """The k-th smallest value along `dim` (k counts from 1) and its index.

    >>> kthvalue(tensor([3., 1., 2.]), 2).values
    tensor(2.)
    """
    ndim = input._data.ndim
    d = wrap_dim(dim, max(ndim, 1))
    size = input._data.shape[d] if ndim else 1
    _check_nonempty_dim(input, d, "kthvalue")
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    return _select_position(input, dim, keepdim, lambda rows, order: np.full(len(rows), k - 1),
                            return_types.kthvalue, out, "kth", k - 1)


def _lower_median_ignoring_nan(rows, order):
    # NaN sorts last: a row's non-NaN count says where its lower median is.
    if rows.dtype.kind in "iub":
        valid = np.full(len(rows), rows.shape[1])
    else:
        valid = (~np.isnan(rows.astype(np.float64))).sum(axis=1)
    return np.maximum(valid - 1, 0) // 2


@op()
def nanmedian(input, dim=None, keepdim=False, *, out=None):
    """The lower median ignoring NaN (NaN only when a line is all NaN), over all
    elements or along `dim` with indices.

    >>> nanmedian(tensor([1., float('nan'), 3., 2.]))
    tensor(2.)
    """
    if dim is None:
        flat = input.reshape(-1)
        if not flat._data.size:
            return wrap(np.array(np.nan, dtype=input._dtype.np), input._dtype, input._device)
        return _select_position(flat, 0, False, _lower_median_ignoring_nan, return_types.nanmedian,
                                None, "nanmedian").values
    if input._data.ndim and not input._data.shape[wrap_dim(dim, input._data.ndim)]:
        raise IndexError(f"median(): Expected reduction dim {dim} to have non-zero size.")  # sic, PyTorch's
    return _select_position(input, dim, keepdim, _lower_median_ignoring_nan, return_types.nanmedian, out,
                            "nanmedian")


@op()
def mode(input, dim=-1, keepdim=False, *, out=None):
    """The most frequent value along `dim` (the smallest among ties) and the index of its
    last occurrence.

    >>> mode(tensor([1, 2, 2, 3, 3, 1]))
    torch.return_types.mode(
    values=tensor(1),
    indices=tensor(5))
    """
    _check_nonempty_dim(input, wrap_dim(dim, max(input._data.ndim, 1)), "mode")
    if input._device.type == "cuda":
        dim = wrap_dim(dim, max(input._data.ndim, 1))
        values, chosen = CS.mode(input, dim)
        if not keepdim and input._data.ndim:
            values, chosen = values.squeeze(dim), chosen.squeeze(dim)
        return _pair(return_types.mode, values, chosen, out)
    dim, rows, order = _sorted_lines(input, dim, False)
    keys = _sort_keys(rows, input._dtype)
    sorted_keys = np.ascontiguousarray(np.take_along_axis(keys, order, axis=1))
    chosen = np.empty((len(rows), 1), np.int64)
    if rows.size:
        K.mode_rows(sorted_keys.view(np.uint8) if sorted_keys.dtype == np.bool_ else sorted_keys,
                    np.ascontiguousarray(order), chosen)
    values = np.take_along_axis(rows, chosen, axis=1)
    values, chosen = _back(values, input, dim, n=1), _back(chosen, input, dim, D.int64, n=1)
    if not keepdim and input._data.ndim:
        values, chosen = values.squeeze(dim), chosen.squeeze(dim)
    return _pair(return_types.mode, values, chosen, out)
