"""CUDA indexing: the device side of `_ops/indexing`, `masked` and `flip` (gather and
scatter are in `_backends.cuda.scatter`, the index-array and offset helpers in `_backends.cuda.index_arrays`).

The op files do the argument checks (shared with the CPU) and call in here for CUDA
tensors; everything runs in the kernels of `_kernels/cuda_index` on device arrays. What
crosses to the host is a single value where PyTorch synchronises too: the first bad
position of a bounds check (a sentinel when all are good; on an error one more value,
the bad index, is read to raise the CPU's message), and the number of results of an op
whose output size depends on the data (nonzero, masked_select, boolean-mask indexing,
repeat_interleave with a tensor of counts and no output_size).

Index arrays here are C-contiguous int64 device arrays. Repeated targets: index_put_
with accumulate adds with atomics (in float32 for float16/bfloat16, int32 for the small
integer types; float sums may round differently from the CPU's, within tolerance);
plain writes to repeated targets keep one of the values, as on PyTorch's GPU.
"""
import numpy as np

from . import arrays, storage
from ... import _dtype as D
from .index_arrays import (
    _bad_flag, _column, _flat_buffer, _launch, _movement, _padded, _read_flag, _zeros, as_mask, dim_offsets, first_out_of_range, index_on_device, on_device_of_first, read_scalar, to_index_array, view_offsets,
)  # the public ones are re-exported (see __all__)
from .kernels import index as K
from .kernels.loops import SIMULATOR
from ..._tensor import Tensor

__all__ = ["index_on_device", "as_mask", "to_index_array", "read_scalar", "first_out_of_range",
           "view_offsets", "dim_offsets", "element_offsets", "advanced_read", "advanced_write",
           "nonzero_positions", "nonzero", "masked_select", "masked_put", "flip", "repeat_index",
           "mask_positions"]

# Work dtypes for atomic adds: CUDA has atomics for 32/64-bit ints and floats only.
_ATOMIC_WORK = {np.dtype(np.float16): np.float32, arrays.BF16: np.float32,
                np.dtype(np.int8): np.int32, np.dtype(np.int16): np.int32, np.dtype(np.uint8): np.int32,
                np.dtype(np.bool_): np.int32}
_CHUNKS = 4 if SIMULATOR else 1024  # fewest scan chunks (the simulator runs a thread each)


# --- advanced indexing (an IndexPlan whose arrays are device arrays) -------------------------------

@on_device_of_first
def element_offsets(plan, strides):
    """Bounds-checked element offsets the plan's index arrays select (PyTorch's IndexError)."""
    plan.check_empty_dims()
    shape = plan.view._data.shape
    n = int(np.prod(plan.index_shape))
    offs = storage.empty((n,), np.int64)  # the first index array writes it, the others add
    if not n:
        return offs
    flats = []
    for d, arr in zip(plan.dims, plan.arrays):
        if tuple(arr.shape) != tuple(plan.index_shape):
            arr = storage.broadcast_to(arr, plan.index_shape)
        flats.append(to_index_array(arr))
    bad = _bad_flag()
    for position, (d, flat) in enumerate(zip(plan.dims, flats)):
        _launch(K.add_index_offsets, n, flat, shape[d], strides[d], offs, position, bad)
    first = _read_flag(bad)
    if first is not None:
        position, i = divmod(first, n)
        raise IndexError(f"index {int(read_scalar(flats[position], i))} is out of bounds for dimension "
                         f"{position} with size {shape[plan.dims[position]]}")
    return offs


def _plan_offsets(plan, strides):
    shape = plan.view._data.shape
    before, after = plan.rest_dims()
    parts = [view_offsets([shape[d] for d in dims], [strides[d] for d in dims]) for dims in (before, after)]
    if parts[0].size and parts[1].size:
        offs = element_offsets(plan, strides)
    else:  # nothing is read or written: PyTorch checks only for indices into empty dims
        plan.check_empty_dims()
        offs = _zeros(int(np.prod(plan.index_shape)))
    return parts[0], offs, parts[1], plan.result_shape()


@on_device_of_first
def advanced_read(plan):
    """view[advanced part of the key] for a plan over a CUDA view: a new tensor."""
    view = plan.view
    buf, strides = _flat_buffer(view._data)
    before, offs, after, shape = _plan_offsets(plan, strides)
    out = storage.empty(tuple(shape), view._data.dtype)
    if out.size:
        _launch(K.gather_3, out.size, _movement(buf), before, offs, after, _movement(arrays.flat(out)))
    return Tensor._wrap(out, view._dtype, view._device)


def _broadcast_value(value, dtype, shape):
    """`value` (tensor or number) as a C-contiguous device array of `dtype` and `shape`."""
    if not isinstance(value, Tensor):
        arr = storage.empty(tuple(shape), dtype.np)
        storage.fill_(arr, value)
        return arr
    arr = value._data if value._device.type == "cuda" else storage.from_numpy(value._host_numpy())
    while arr.ndim > len(shape) and arr.shape[0] == 1:
        arr = arrays.restride(arr, arr.shape[1:], arr.strides[1:])  # PyTorch drops leading 1s
    fits = arr.ndim <= len(shape) and all(
        m in (1, n) for m, n in zip(arr.shape[::-1], tuple(shape)[::-1]))
    if not fits:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(arr.shape)} cannot be broadcast "
                           f"to indexing result of shape {list(shape)}")
    return storage.astype(storage.broadcast_to(arr, tuple(shape)), dtype.np)


@on_device_of_first
def advanced_write(plan, value, accumulate):
    """view[advanced part] = value (+= with `accumulate`) for a plan over a CUDA view."""
    view = plan.view
    data = view._data
    wide = _ATOMIC_WORK.get(data.dtype) if accumulate else None
    work = storage.astype(data, wide) if wide is not None else data
    buf, strides = _flat_buffer(work)
    before, offs, after, shape = _plan_offsets(plan, strides)
    vals = _broadcast_value(value, view._dtype, shape)
    n = before.size * offs.size * after.size
    if not n:
        return
    if not accumulate:
        _launch(K.put_3, n, _movement(buf), before, offs, after, _movement(arrays.flat(vals)))
        return
    if wide is not None:
        vals = storage.astype(vals, wide)
    _launch(K.put_3_add, n, buf, before, offs, after, arrays.flat(vals))
    if wide is not None:
        storage.copy_(data, work)


# --- data-sized results -------------------------------------------------------------------

def _scan_plan(n):
    """(nchunks, chunk): about sqrt(n) chunks (at least _CHUNKS), so that neither the
    per-chunk loops nor the one-thread scan of the chunk sums gets long."""
    nchunks = min(n, max(_CHUNKS, int(n ** 0.5)))
    return nchunks, -(-n // nchunks)


def _exclusive_chunk_starts(values):
    """(starts per chunk, chunk, total) of the chunked exclusive scan of 1-d `values`."""
    nchunks, chunk = _scan_plan(values.size)
    sums = storage.empty((nchunks,), np.int64)
    starts = storage.empty((nchunks,), np.int64)
    total = storage.empty((1,), np.int64)
    _launch(K.chunk_sums, nchunks, values, chunk, sums)
    _launch(K.scan_chunk_sums, 1, sums, starts, total)
    return starts, chunk, total


@on_device_of_first
def nonzero_positions(data):
    """(flat row-major positions of data's nonzero elements as an int64 device array, count)."""
    n = data.size
    if not n:
        return storage.empty((0,), np.int64), 0
    if data.dtype != np.bool_ or not arrays.is_c(data):
        data = storage.astype(data, np.bool_)  # a copy converts: x != 0 (NaN counts as nonzero)
    flags = arrays.flat(arrays.reinterpret(data, np.uint8))
    starts, chunk, total = _exclusive_chunk_starts(flags)
    count = int(read_scalar(total))
    positions = storage.empty((count,), np.int64)
    if count:
        _launch(K.write_positions, starts.size, flags, chunk, starts, positions)
    return positions, count


def _unravel(positions, shape):
    ndim = len(shape)
    out = storage.empty((positions.size, ndim), np.int64)
    if positions.size and ndim:
        padded = tuple([1] * (K.MAX_DIMS - ndim) + list(shape))
        _launch(K.unravel, positions.size, positions, padded, ndim, arrays.flat(out))
    return out


@on_device_of_first
def nonzero(input, as_tuple):
    """nonzero(input) for a CUDA tensor: (n, ndim) int64, or one 1-d tensor per dim."""
    data = input._data
    shape = tuple(data.shape) or (1,)
    positions, count = nonzero_positions(data)
    coords = _unravel(positions, shape if data.ndim else ())
    device = input._device
    if not as_tuple:
        return Tensor._wrap(coords, D.int64, device)
    if not data.ndim:  # a 0-d input counts as 1-d
        return (Tensor._wrap(_zeros(count), D.int64, device),)
    return tuple(Tensor._wrap(_column(coords, d), D.int64, device) for d in range(data.ndim))


def _mask_offsets(view, mask):
    """(flat buffer of view, element offsets of the view's elements where same-shape
    bool `mask` is True, in row-major order)."""
    positions, count = nonzero_positions(mask._data)
    buf, strides = _flat_buffer(view._data)
    offs = storage.empty((count,), np.int64)
    padded = _padded(view._data.shape, strides)
    if padded is not None:
        _launch(K.positions_to_offsets, count, positions, *padded, offs)
    else:  # many dims: every element's offset, then those at the positions
        _launch(K.take_flat, count, view_offsets(view._data.shape, strides), positions, offs)
    return buf, offs


@on_device_of_first
def masked_select(view, mask):
    """view[mask] for a bool mask of view's shape (both on CUDA): a new 1-d tensor."""
    buf, offs = _mask_offsets(view, mask)
    out = storage.empty((offs.size,), view._data.dtype)
    _launch(K.take_flat, offs.size, _movement(buf), offs, _movement(out))
    return Tensor._wrap(out, view._dtype, view._device)


@on_device_of_first
def masked_put(view, mask, value):
    """view[mask] = value (a number, or a tensor broadcast to the count) for a bool mask of
    view's shape (both on CUDA)."""
    buf, offs = _mask_offsets(view, mask)
    vals = _broadcast_value(value, view._dtype, (offs.size,))
    _launch(K.put_flat, offs.size, _movement(buf), offs, _movement(vals))


@on_device_of_first
def mask_positions(mask_data):
    """One int64 device array per dim of a boolean mask: the coordinates of its True elements."""
    positions, _ = nonzero_positions(mask_data)
    coords = _unravel(positions, tuple(mask_data.shape))
    return [_column(coords, d) for d in range(mask_data.ndim)]


# --- shape ops that move elements -------------------------------------------------------------

@on_device_of_first
def flip(input, axes):
    """A contiguous copy of CUDA tensor `input` reversed along `axes`."""
    data = input._data
    out = storage.empty(tuple(data.shape), data.dtype)
    if not out.size:
        return Tensor._wrap(out, input._dtype, input._device)
    buf, strides = _flat_buffer(data)
    base = 0
    for d in axes:
        base += (data.shape[d] - 1) * strides[d]
        strides[d] = -strides[d]
    padded = _padded(data.shape, strides)
    if padded is not None:
        _launch(K.gather_strided, out.size, _movement(buf), *padded, base, _movement(arrays.flat(out)))
    else:
        _launch(K.take_flat, out.size, _movement(buf), view_offsets(data.shape, strides, base),
                _movement(arrays.flat(out)))
    return Tensor._wrap(out, input._dtype, input._device)


@on_device_of_first
def repeat_index(counts, output_size=None):
    """[0] * counts[0] + [1] * counts[1] + ... as an int64 CUDA tensor (counts checked >= 0).

    The output size is read back (one value) unless `output_size` is given.
    """
    data = to_index_array(counts._data)
    n = data.size
    if not n:
        return Tensor._wrap(storage.empty((0,), np.int64), D.int64, counts._device)
    starts, chunk, total = _exclusive_chunk_starts(data)
    size = int(read_scalar(total)) if output_size is None else int(output_size)
    prefix = storage.empty((n,), np.int64)
    _launch(K.chunk_prefix, starts.size, data, chunk, starts, prefix)
    out = storage.empty((size,), np.int64)
    _launch(K.fill_repeats, size, prefix, out)
    return Tensor._wrap(out, D.int64, counts._device)
