"""CUDA indexing: the same functions as `_backends.cpu.indexing` over device arrays (gather
and scatter along a dim are in `scatter`, the index-array and offset helpers in
`index_arrays`).

Everything runs in the kernels of `kernels.index` on device arrays. What
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

from ..._runtime.determinism import alert_not_deterministic, are_deterministic_algorithms_enabled
from ..plan import WORDS, word_layout
from . import arrays, launch, layout, storage
from .index_arrays import (
    bad_flag, padded_layout, read_flag, as_mask, first_out_of_range, index_on_device,
    put_items, read_scalar, take_items, to_index_array, view_offsets,
)  # the public ones are re-exported (see __all__)
from .kernels import index as K
from .kernels.loops import SIMULATOR

__all__ = ["index_array", "index_vector", "mask_array", "mask_positions", "first_out_of_range", "element_offsets", "read",
           "write", "read_leading", "write_leading", "read_arrays", "write_arrays", "nonzero_positions", "nonzero",
           "flip", "repeat_index"]

# Work dtypes for atomic adds: CUDA has atomics for 32/64-bit ints and floats only.
_ATOMIC_WORK = {np.dtype(np.float16): np.float32, arrays.BF16: np.float32,
                np.dtype(np.int8): np.int32, np.dtype(np.int16): np.int32, np.dtype(np.uint8): np.int32,
                np.dtype(np.bool_): np.int32}
_CHUNKS = 4 if SIMULATOR else 1024  # fewest scan chunks (the simulator runs a thread each)


# --- advanced indexing (an IndexPlan whose arrays are device arrays) -------------------------------

def index_array(data):
    """An int64 device array of the integer index array `data` (host or device; same shape)."""
    return index_on_device(data)


def index_vector(data):
    """A C-contiguous 1-d int64 device array of the integer index array `data`, flattened."""
    return to_index_array(data)


def mask_array(data):
    """A bool device array of the bool or (legacy) uint8 mask `data`."""
    return as_mask(data)


def element_offsets(plan, strides):
    """Bounds-checked offsets (element `strides` of the view) that the plan's index arrays
    select; an index out of bounds raises the plan's IndexError (PyTorch's wording)."""
    plan.check_empty_dims()
    shape = plan.shape
    n = int(np.prod(plan.index_shape))
    offs = storage.empty((n,), np.int64)  # the first index array writes it, the others add
    if not n:
        return offs
    flats = []
    for d, arr in zip(plan.dims, plan.arrays):
        if tuple(arr.shape) != tuple(plan.index_shape):
            arr = storage.broadcast_to(arr, plan.index_shape)
        flats.append(to_index_array(arr))
    bad = bad_flag()
    for position, (d, flat) in enumerate(zip(plan.dims, flats)):
        launch.grid_stride(K.add_index_offsets, n, flat, shape[d], strides[d], offs, position, bad)
    first = read_flag(bad)
    if first is not None:
        position, i = divmod(first, n)
        raise plan.out_of_bounds(position, int(read_scalar(flats[position], i)))
    return offs


def _plan_offsets(plan, strides, words=1):
    """(before, offs, after, result_shape) for the 3-level kernels of a plan, counted in
    items of `words` movement words (2: a 16-byte item's words are the last dim of `after`)."""
    shape = plan.shape
    before, after = plan.rest_dims()
    parts = [view_offsets([shape[d] for d in before], [strides[d] * words for d in before]),
             view_offsets(*word_layout([shape[d] for d in after], [strides[d] for d in after], words))]
    strides = [s * words for s in strides]
    if parts[0].size and parts[1].size:
        offs = element_offsets(plan, strides)
    else:  # nothing is read or written: PyTorch checks only for indices into empty dims
        plan.check_empty_dims()
        offs = storage.zeros((int(np.prod(plan.index_shape)),), np.int64)
    return parts[0], offs, parts[1], plan.result_shape()


def read(data, plan):
    """data[advanced part of the plan's key]: a new device array of the plan's result shape."""
    buf, strides = layout.flat_buffer(data)
    words = WORDS[data.dtype.itemsize]
    before, offs, after, shape = _plan_offsets(plan, strides, words)
    out = storage.empty(tuple(shape), data.dtype)
    if out.size:
        launch.grid_stride(K.gather_3, out.size * words, layout.movement(buf), before, offs, after,
                           layout.movement(arrays.flat(out)))
    return out


def write(data, plan, values, accumulate, alert=None):
    """data[advanced part] = values (+= with `accumulate`: repeated targets add up with
    atomics), in place; `values` is a C-contiguous device array of data's dtype and the
    plan's result shape. With deterministic algorithms on, float sums add in index order
    instead (PyTorch's sorted index_put), unless `alert` names an op PyTorch refuses then
    (put_: its alert is raised or warned)."""
    if accumulate and alert is not None:
        alert_not_deterministic(alert)
    wide = _ATOMIC_WORK.get(data.dtype) if accumulate else None
    work = storage.astype(data, wide) if wide is not None else data
    buf, strides = layout.flat_buffer(work)
    if not accumulate:
        words = WORDS[data.dtype.itemsize]  # copies move words
    elif data.dtype.kind == "c":
        words = 2  # complex sums add real and imaginary parts as floats: CUDA has no complex atomics
    else:
        words = 1
    before, offs, after, _ = _plan_offsets(plan, strides, words)
    n = before.size * offs.size * after.size
    if not n:
        return
    if not accumulate:
        # A private copy of the values: they may share memory with `data` (x[i] = x[j]), and the
        # kernel's threads read and write in any order.
        values = storage.astype(values, values.dtype)
        launch.grid_stride(K.put_3, n, layout.movement(buf), before, offs, after, layout.movement(arrays.flat(values)))
        return
    vals = storage.astype(values, wide) if wide is not None else values
    if data.dtype.kind == "c":
        buf, vals = _parts(buf), _parts(arrays.flat(vals))
    if are_deterministic_algorithms_enabled() and work.dtype.kind in "fc":
        launch.grid_stride(K.put_3_add_ordered, before.size * after.size, buf, before, offs, after, arrays.flat(vals))
    else:
        launch.grid_stride(K.put_3_add, n, buf, before, offs, after, arrays.flat(vals))
    if wide is not None:
        storage.copy_(data, work)


def _parts(arr):
    """A 1-d contiguous complex device array as its real and imaginary parts, interleaved."""
    real = np.empty(0, arr.dtype).real.dtype
    return arrays.restride(arr, (2 * arr.shape[0],), (real.itemsize,), dtype=real)


def _is_full_mask(data, index):
    return index.dtype == np.bool_ and data.ndim > 0 and tuple(index.shape) == tuple(data.shape)


def read_leading(data, index):
    """data[mask] for a bool mask shaped like `data` (``x[x > 0]``: the device works on flat
    positions, without per-dim index arrays); None for other keys (the general path)."""
    return _masked_select(data, index) if _is_full_mask(data, index) else None


def write_leading(data, index, value):
    """data[mask] = value (a number, or an array broadcast to the count) for a bool mask
    shaped like `data`; False for other keys (the general path runs)."""
    if not _is_full_mask(data, index):
        return False
    buf, offs = _mask_offsets(data, index)
    vals = _broadcast_to_count(value, data.dtype, offs.size)
    put_items(buf, offs, vals)
    return True


def read_arrays(data, arrays):
    """No device shortcut for small integer keys: None (the general path runs)."""
    return None


def write_arrays(data, arrays, value):
    """No device shortcut for small integer keys: False (the general path runs)."""
    return False


def _broadcast_to_count(value, dtype, count):
    """`value` (a number, or a device array broadcastable to (count,)) as a contiguous
    device array of `dtype` and shape (count,)."""
    if not arrays.is_array(value):
        out = storage.empty((count,), dtype)
        storage.fill_(out, value)
        return out
    while value.ndim > 1 and value.shape[0] == 1:
        value = arrays.restride(value, value.shape[1:], value.strides[1:])  # PyTorch drops leading 1s
    if value.ndim > 1 or (value.ndim == 1 and value.shape[0] not in (1, count)):
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(value.shape)} cannot be broadcast "
                           f"to indexing result of shape {[count]}")
    return storage.astype(storage.broadcast_to(value, (count,)), dtype)


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
    launch.grid_stride(K.chunk_sums, nchunks, values, chunk, sums)
    launch.grid_stride(K.scan_chunk_sums, 1, sums, starts, total)
    return starts, chunk, total


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
        launch.grid_stride(K.write_positions, starts.size, flags, chunk, starts, positions)
    return positions, count


def _unravel(positions, shape):
    ndim = len(shape)
    out = storage.empty((positions.size, ndim), np.int64)
    if positions.size and ndim:
        padded = tuple([1] * (K.MAX_DIMS - ndim) + list(shape))
        launch.grid_stride(K.unravel, positions.size, positions, padded, ndim, arrays.flat(out))
    return out


def nonzero(data, as_tuple):
    """The coordinates of data's nonzero elements: an (n, ndim) int64 device array, or one
    1-d int64 device array per dim with `as_tuple` (a 0-d array counts as 1-d)."""
    shape = tuple(data.shape) or (1,)
    positions, count = nonzero_positions(data)
    coords = _unravel(positions, shape if data.ndim else ())
    if not as_tuple:
        return coords
    if not data.ndim:
        return (storage.zeros((count,), np.int64),)
    return tuple(layout.column(coords, d) for d in range(data.ndim))


def _mask_offsets(data, mask):
    """(flat buffer of data, offsets in movement words (`plan.WORDS`) of data's elements
    where same-shape bool `mask` is True, in row-major order)."""
    positions, count = nonzero_positions(mask)
    buf, strides = layout.flat_buffer(data)
    strides = [s * WORDS[data.dtype.itemsize] for s in strides]
    offs = storage.empty((count,), np.int64)
    padded = padded_layout(data.shape, strides)
    if padded is not None:
        launch.grid_stride(K.positions_to_offsets, count, positions, *padded, offs)
    else:  # many dims: every element's offset, then those at the positions
        launch.grid_stride(K.take_flat, count, view_offsets(data.shape, strides), positions, offs)
    return buf, offs


def _masked_select(data, mask):
    """data[mask] for a bool mask of data's shape: a new 1-d device array."""
    buf, offs = _mask_offsets(data, mask)
    out = storage.empty((offs.size,), data.dtype)
    take_items(buf, offs, out)
    return out


def mask_positions(mask):
    """One int64 device array per dim of a boolean mask: the coordinates of its True elements."""
    positions, _ = nonzero_positions(mask)
    coords = _unravel(positions, tuple(mask.shape))
    return [layout.column(coords, d) for d in range(mask.ndim)]


# --- shape ops that move elements -------------------------------------------------------------

def flip(data, axes):
    """A contiguous copy of device array `data` reversed along `axes`."""
    out = storage.empty(tuple(data.shape), data.dtype)
    if not out.size:
        return out
    buf, strides = layout.flat_buffer(data)
    base = 0
    for d in axes:
        base += (data.shape[d] - 1) * strides[d]
        strides[d] = -strides[d]
    words = WORDS[data.dtype.itemsize]
    shape, strides = word_layout(data.shape, strides, words)  # 16-byte items: their words a last dim
    padded = padded_layout(shape, strides)
    if padded is not None:
        launch.grid_stride(K.gather_strided, out.size * words, layout.movement(buf), *padded, base * words,
                           layout.movement(arrays.flat(out)))
    else:
        launch.grid_stride(K.take_flat, out.size * words, layout.movement(buf),
                           view_offsets(shape, strides, base * words), layout.movement(arrays.flat(out)))
    return out


def repeat_index(counts, output_size=None):
    """[0] * counts[0] + [1] * counts[1] + ... as an int64 device array (counts checked >= 0
    by the caller). The output size is read back (one value) unless `output_size` is given."""
    data = to_index_array(counts)
    n = data.size
    if not n:
        return storage.empty((0,), np.int64)
    starts, chunk, total = _exclusive_chunk_starts(data)
    size = int(read_scalar(total)) if output_size is None else int(output_size)
    prefix = storage.empty((n,), np.int64)
    launch.grid_stride(K.chunk_prefix, starts.size, data, chunk, starts, prefix)
    out = storage.empty((size,), np.int64)
    launch.grid_stride(K.fill_repeats, size, prefix, out)
    return out
