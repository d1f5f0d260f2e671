"""CUDA searching and counting: searchsorted, bincount, histc, unique, unique_consecutive.

The device twin of `_ops/counting.py`'s host code, with the same results. Ops whose output
size (or histc's range) depends on the data read that one number back, as PyTorch's CUDA
kernels do: bincount its largest value (and smallest, for the error), histc the data's
min and max when no range is given, unique the number of groups. Everything else stays
on the device: unique sorts with `_backends.cuda.sorting` (whole slices, for `dim=`, with a bitonic
network that compares slices), marks where runs of equal keys start, numbers the groups
with a device cumsum and scatters values, inverse and counts.
"""
import numpy as np

from . import arrays, launch, storage
from ... import _dtype as D
from .reduction import reduce as _reduce
from .sorting import _as_bits, _key_dtype, _launch_codes, lines, on_device_of, sorted_codes
from .kernels import counting as K
from .kernels import sorting as KS
from ..._tensor import Tensor

__all__ = ["searchsorted", "bincount", "smallest", "index_range", "data_range", "histc", "unique"]


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


def searchsorted(sorted_sequence, values, right, sorter, out_int32):
    """Insertion points of `values` (a device array, or a NumPy array of one scalar) in
    the rows of `sorted_sequence`, as an int64 (int32) tensor shaped like `values`."""
    with on_device_of(sorted_sequence):
        seq = sorted_sequence._data
        if not arrays.is_array(values):
            values = storage.from_numpy(np.asarray(values))
        common = np.result_type(_key_dtype(seq.dtype), _key_dtype(values.dtype))
        keys, _, m = lines(seq, seq.ndim - 1, common)
        if sorter is not None:  # the sequence in sorter's order, row by row
            order, _, _ = lines(sorter._data, seq.ndim - 1, np.int64)
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
        dtype = D.int32 if out_int32 else D.int64
        return Tensor._wrap(out.reshape(shape), dtype, sorted_sequence._device)


def bincount(input, weights, minlength):
    """Counts (or weight sums) of the values of 1-d integer tensor `input`, on the device."""
    with on_device_of(input):
        values = _flat(input._data, np.int64)
        size = minlength
        if values.size:
            size = max(int(_extreme(values, "amax")) + 1, minlength)
        if weights is None:
            counts = storage.empty((size,), np.int64)
            storage.fill_(counts, 0)
            if values.size:
                launch.grid_stride(K.bincount, values.size, values, counts)
            return Tensor._wrap(counts, D.int64, input._device)
        dtype = weights._dtype if weights._dtype in (D.float32, D.float64) else D.float64
        sums = storage.empty((size,), np.float64)
        storage.fill_(sums, 0)
        if values.size:
            launch.grid_stride(K.bincount_weighted, values.size, values, _flat(weights._data, np.float64), sums)
        return Tensor._wrap(sums if dtype is D.float64 else storage.astype(sums, dtype.np), dtype, input._device)


def smallest(input):
    """The smallest value of integer tensor `input`, read from the device."""
    with on_device_of(input):
        return int(_extreme(_flat(input._data, np.int64), "amin"))


def index_range(input):
    """(min, max) of int64 tensor `input`'s values, read from the device."""
    with on_device_of(input):
        values = _flat(input._data, np.int64)
        return int(_extreme(values, "amin")), int(_extreme(values, "amax"))


def data_range(input):
    """(min, max) of float tensor `input`'s values, read from the device."""
    with on_device_of(input):
        values = _flat(input._data, np.float64)
        return float(_extreme(values, "amin")), float(_extreme(values, "amax"))


def histc(input, bins, lo, hi):
    """Histogram of `input` in `bins` bins over [lo, hi] (checked by the caller)."""
    with on_device_of(input):
        values = _flat(input._data, np.float64)
        counts = storage.empty((bins,), np.int64)
        storage.fill_(counts, 0)
        if values.size:
            launch.grid_stride(K.histc, values.size, values, np.float64(lo), np.float64(hi), counts)
        return Tensor._wrap(storage.astype(counts, input._dtype.np), input._dtype, input._device)


def _groups(src_bits, m, order, n, flags, device):
    """(values bits (groups * m), starts, inverse, group count) from sorted positions:
    group[j] = the number of runs started at or before position j (a device cumsum)."""
    from ..._ops.scans import cumsum
    group = cumsum(Tensor._wrap(flags, D.int64, device), 0)._data
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


def _results(input, values, inverse, counts, return_inverse, return_counts, inverse_shape):
    device = input._device
    data = values if values.dtype == input._dtype.np else arrays.reinterpret(values, input._dtype.np)
    result = [Tensor._wrap(data, input._dtype, device)]
    if return_inverse:
        result.append(Tensor._wrap(inverse.reshape(inverse_shape), D.int64, device))
    if return_counts:
        result.append(Tensor._wrap(counts, D.int64, device))
    return result[0] if len(result) == 1 else tuple(result)


def unique(input, return_inverse, return_counts, dim, consecutive):
    """unique / unique_consecutive of `input` (whole slices along `dim` when given)."""
    with on_device_of(input):
        a = input._data
        if dim is None:
            return _unique_flat(input, a, return_inverse, return_counts, consecutive)
        # (the op layer answers empty inputs: here every slice has elements)
        src, length, m, moved, order = _slices(_as_bits(a), dim)
        keys = _flat(_slices(a, dim)[0], _key_dtype(a.dtype))  # unique_consecutive compares values
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
        values, starts, inverse, count = _groups(src, m, positions, length, flags, input._device)
        moved[0] = count
        return _results(input, _restore(values, moved, order), inverse, _counts(starts, length),
                        return_inverse, return_counts, (-1,))


def _codes(keys):
    """uint64 order codes of a flat key array (no padding)."""
    n = keys.size
    codes = storage.empty((n,), np.uint64)
    _launch_codes(keys, 1, n, n, False, codes, storage.empty((n,), np.int64))
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


def _unique_flat(input, a, return_inverse, return_counts, consecutive):
    n = a.size
    shape = tuple(a.shape)
    if n == 0:
        empty = storage.empty((0,), np.int64)
        return _results(input, storage.empty((0,), a.dtype), empty, empty, return_inverse, return_counts, shape)
    src = _flat(_as_bits(a))
    flags = storage.empty((n,), np.int64)
    if consecutive:
        keys = _flat(a, _key_dtype(a.dtype))
        order = storage.empty((n,), np.int64)
        launch.grid_stride(K.iota, n, order)
        launch.grid_stride(K.run_starts, n, keys, n, flags)
    else:
        codes, idx, _, _, _ = sorted_codes(_flat(a), 0, False)
        order = idx[:n]
        launch.grid_stride(K.run_starts, n, codes, n, flags)
    values, starts, inverse, _ = _groups(src, 1, order, n, flags, input._device)
    return _results(input, values, inverse, _counts(starts, n), return_inverse, return_counts, shape)
