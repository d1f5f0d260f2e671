"""CUDA searching and counting: searchsorted, bincount, histc, unique, unique_consecutive.

The same functions as `_backends.cpu.counting`, with the same results, over device
arrays. Ops whose output
size (or histc's range) depends on the data read that one number back, as PyTorch's CUDA
kernels do: bincount its largest value (and smallest, for the error), histc the data's
min and max when no range is given, unique the number of groups. Everything else stays
on the device: unique sorts with `_backends.cuda.sorting` (whole slices, for `dim=`, with a bitonic
network that compares slices), marks where runs of equal keys start, numbers the groups
with a device cumsum and scatters values, inverse and counts.
"""
import numpy as np

from ..._runtime.determinism import alert_not_deterministic
from . import arrays, launch, scans, storage
from .reduction import reduce as _reduce
from .sorting import as_bits, sort_key_dtype, launch_codes, lines, sorted_codes
from .kernels import counting as K
from .kernels import sorting as KS

__all__ = ["unique", "searchsorted", "index_range", "smallest", "data_range", "histc", "bincount"]


def _read(a):
    """The one element of device array `a`, on the host (a synchronising read)."""
    return storage.to_numpy(a.reshape((1,)))[0]


def _extreme(a, kind):
    return _read(_reduce(kind, a, tuple(range(a.ndim)), a.dtype))


def _flat(a, np_dtype=None):
    """`a` as a contiguous 1-d array (of `np_dtype`), copied only if needed."""
    dtype = np.dtype(np_dtype or a.dtype)
    if a.dtype != dtype or not arrays.is_c(a):
        a = storage.astype(a, dtype)
    return arrays.flat(a)


def searchsorted(seq, values, right, sorter, out_int32):
    """Insertion points of `values` (a device array, or a NumPy 0-d array of one number)
    in the rows of `seq` (1-d, or a batch of rows matching `values`' leading dims, checked
    by the op), read in `sorter`'s order when it is given; int32 (`out_int32`) or int64,
    shaped like `values`."""
    if not arrays.is_array(values):
        values = storage.from_numpy(np.asarray(values))
    common = np.result_type(sort_key_dtype(seq.dtype), sort_key_dtype(values.dtype))
    keys, _, m = lines(seq, seq.ndim - 1, common)
    if sorter is not None:  # the sequence in sorter's order, row by row
        order, _, _ = lines(sorter, seq.ndim - 1, np.int64)
        ordered = storage.empty(keys.shape, common)
        if keys.size:
            launch.grid_stride(KS.take_sorted, keys.size, keys, m, order, m, 0, m, ordered,
                          storage.empty(keys.shape, np.int64))
        keys = ordered
    shape = tuple(values.shape)
    flat = _flat(values, common)
    nv = shape[-1] if shape else 1
    out = storage.empty((flat.size,), np.int32 if out_int32 else np.int64)
    if flat.size:
        launch.grid_stride(K.search, flat.size, keys, m, flat, nv, seq.ndim > 1, bool(right), out)
    return out.reshape(shape)


def bincount(a, weights, minlength, result_dtype):
    """Counts of the values 0..max(a) of the 1-d non-negative integer array `a` (int64), or
    the sums of `weights` at them (`result_dtype`); at least `minlength` bins. The largest
    value is read back to size the result."""
    if weights is not None:
        alert_not_deterministic("_bincount_cuda")  # PyTorch's float atomics
    values = _flat(a, np.int64)
    size = minlength
    if values.size:
        size = max(int(_extreme(values, "amax")) + 1, minlength)
    if weights is None:
        counts = storage.empty((size,), np.int64)
        storage.fill_(counts, 0)
        if values.size:
            launch.grid_stride(K.bincount, values.size, values, counts)
        return counts
    sums = storage.empty((size,), np.float64)
    storage.fill_(sums, 0)
    if values.size:
        launch.grid_stride(K.bincount_weighted, values.size, values, _flat(weights, np.float64), sums)
    return sums if np.dtype(result_dtype) == np.float64 else storage.astype(sums, result_dtype)


def smallest(a):
    """The smallest value of the non-empty integer array `a`, read from the device."""
    return int(_extreme(_flat(a, np.int64), "amin"))


def index_range(a):
    """(min, max) of the non-empty integer array `a`, read from the device."""
    values = _flat(a, np.int64)
    return int(_extreme(values, "amin")), int(_extreme(values, "amax"))


def data_range(a):
    """(min, max) of the non-empty float array `a`, read from the device."""
    values = _flat(a, np.float64)
    return float(_extreme(values, "amin")), float(_extreme(values, "amax"))


def histc(a, bins, lo, hi):
    """Histogram of `a` in `bins` equal bins over [lo, hi] (finite, lo < hi), values outside
    ignored, in `a`'s dtype."""
    if a.dtype.kind == "f":
        # PyTorch's name since its integer histograms became exact (2.x; earlier "_histc_cuda").
        alert_not_deterministic("_histc_cuda with floating point input")
    values = _flat(a, np.float64)
    counts = storage.empty((bins,), np.int64)
    storage.fill_(counts, 0)
    if values.size:
        launch.grid_stride(K.histc, values.size, values, np.float64(lo), np.float64(hi), counts)
    return storage.astype(counts, a.dtype)


def _groups(src_bits, m, order, n, flags):
    """(values bits (groups * m), starts, inverse, group count) from sorted positions:
    group[j] = the number of runs started at or before position j (a device cumsum)."""
    group = scans.accumulate(flags, 0, False, np.dtype(np.int64))
    count = int(_read(group[n - 1:n]))
    values = storage.empty((count * m,), src_bits.dtype)
    starts = storage.empty((count,), np.int64)
    inverse = storage.empty((n,), np.int64)
    launch.grid_stride(K.scatter_groups, n, src_bits, m, order, n, flags, group, values, starts, inverse)
    return values, starts, inverse, count


def _counts(starts, n):
    counts = storage.empty(starts.shape, np.int64)
    if counts.size:
        launch.grid_stride(K.group_counts, counts.size, starts, n, counts)
    return counts


def _slices(a, dim):
    """(buf, length, m, moved shape, dim order): the `length` slices of `a` along `dim`
    as contiguous rows of m elements (`dim` moved first)."""
    a = a.reshape((1,)) if a.ndim == 0 else a
    order = [dim] + [d for d in range(a.ndim) if d != dim]
    moved = [a.shape[d] for d in order]
    view = arrays.restride(a, tuple(moved), tuple(a.strides[d] for d in order))
    length = a.shape[dim]
    m = a.size // length if length else 0
    return _flat(view), length, m, moved, order


def _restore(rows, moved_shape, order):
    """(G, m) slices back to the input's layout with G slices at the original dim."""
    inverse_order = [order.index(d) for d in range(len(order))]
    shape = tuple(moved_shape[i] for i in inverse_order)
    out = storage.empty(shape, rows.dtype)
    if rows.size:
        view = arrays.restride(out, tuple(moved_shape), tuple(out.strides[d] for d in order))
        storage.copy_(view, rows.reshape(tuple(moved_shape)))
    return out


def _results(a, values, inverse, counts, inverse_shape):
    """(values as `a`'s dtype, inverse shaped `inverse_shape`, counts)."""
    data = values if values.dtype == a.dtype else arrays.reinterpret(values, a.dtype)
    return data, inverse.reshape(inverse_shape), counts


def unique(a, dim, consecutive):
    """(values, inverse, counts): the distinct values of `a` (slices along `dim` when it is
    not None) sorted, or its runs of equal consecutive values (`consecutive`); int64
    inverse shaped like `a` (along `dim`: one per slice) and int64 counts.

    Along `dim`, every slice has elements (the op answers empty inputs).
    """
    if dim is None:
        return _unique_flat(a, consecutive)
    # (the op layer answers empty inputs: here every slice has elements)
    src, length, m, moved, order = _slices(as_bits(a), dim)
    keys = _flat(_slices(a, dim)[0], sort_key_dtype(a.dtype))  # unique_consecutive compares values
    positions = storage.empty((length,), np.int64)
    launch.grid_stride(K.iota, length, positions)
    if not consecutive:  # sort the slices by their order codes, then compare codes
        keys = _codes(keys)
        width = 1
        while width < length:
            width *= 2
        padded = storage.empty((width,), np.int64)
        launch.grid_stride(K.iota, width, padded)
        _bitonic_slices(keys, m, length, padded)
        positions = padded[:length]
    flags = storage.empty((length,), np.int64)
    launch.grid_stride(K.slice_run_starts, length, keys, m, positions, length, flags)
    values, starts, inverse, count = _groups(src, m, positions, length, flags)
    moved[0] = count
    return _results(a, _restore(values, moved, order), inverse, _counts(starts, length), (-1,))


def _codes(keys):
    """uint64 order codes of a flat key array (no padding)."""
    n = keys.size
    codes = storage.empty((n,), np.uint64)
    launch_codes(keys, 1, n, n, False, codes, storage.empty((n,), np.int64))
    return codes


def _bitonic_slices(codes, m, rows, order):
    width = order.size
    k = 2
    while k <= width:
        j = k // 2
        while j > 0:
            launch.grid_stride(K.slice_step, width // 2, codes, m, rows, order, k, j)
            j //= 2
        k *= 2


def _unique_flat(a, consecutive):
    n = a.size
    shape = tuple(a.shape)
    if n == 0:
        empty = storage.empty((0,), np.int64)
        return _results(a, storage.empty((0,), a.dtype), empty, empty, shape)
    src = _flat(as_bits(a))
    flags = storage.empty((n,), np.int64)
    if consecutive:
        keys = _flat(a, sort_key_dtype(a.dtype))
        order = storage.empty((n,), np.int64)
        launch.grid_stride(K.iota, n, order)
        launch.grid_stride(K.run_starts, n, keys, n, flags)
    else:
        codes, idx, _, _, _ = sorted_codes(_flat(a), 0, False)
        order = idx[:n]
        launch.grid_stride(K.run_starts, n, codes, n, flags)
    values, starts, inverse, _ = _groups(src, 1, order, n, flags)
    return _results(a, values, inverse, _counts(starts, n), shape)
