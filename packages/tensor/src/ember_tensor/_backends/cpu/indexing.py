"""CPU advanced indexing: reads and writes through index arrays, index conversion, bounds
checks, and the data-sized results (nonzero, masked_select).

An `IndexPlan` (`_ops/_index_plan.py`, passed in, never imported) says which dims of a
view its int64 index arrays index. Every operand reaches the Numba kernels of
`kernels/index.py` as a 1-d buffer over its memory plus element strides, so one compiled
specialization per item size serves every rank and layout: the unindexed dims before
and after the index dims become two offset vectors and the kernels walk
out[a, j, b] <-> buf[before[a] + offs[j] + after[b]] (TensorIterator's trick).
"""
import ml_dtypes
import numpy as np

from ..lazy import lazy
from ..plan import WORDS, word_layout
from .lines import flat_buffer

__all__ = ["index_array", "index_vector", "mask_array", "mask_positions", "first_out_of_range", "element_offsets", "read",
           "write", "read_leading", "write_leading", "read_arrays", "write_arrays", "nonzero_positions", "nonzero",
           "flip", "repeat_index"]

K = lazy("cpu.kernels.index")  # Numba loads on first use

_UINT_OF_SIZE = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_LOW = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))
_SMALL = 1 << 16  # index sizes read through NumPy's take (see read_leading)


def movement_view(arr):
    """`arr` viewed as unsigned integers of the same size: kernels that only move elements
    then compile once per item size (and work for float16/bfloat16, which Numba lacks).
    16-byte items as pairs of uint64 words: the last dim (C-contiguous) doubles."""
    size = arr.dtype.itemsize
    return arr.view(_UINT_OF_SIZE[size] if size in _UINT_OF_SIZE else np.uint64)


def index_array(data):
    """An int64 array of the integer index array `data` (same shape; no copy if it is one)."""
    return np.asarray(data).astype(np.int64, copy=False)


def index_vector(data):
    """A C-contiguous 1-d int64 copy of the integer index array `data`, flattened."""
    return np.asarray(data).reshape(-1).astype(np.int64)


def mask_array(data):
    """A bool array of the bool or (legacy) uint8 mask `data`."""
    return np.asarray(data).astype(np.bool_, copy=False)


def mask_positions(mask):
    """The int64 index arrays of `mask`'s nonzero positions, one per dim it covers."""
    return tuple(p.astype(np.int64) for p in np.nonzero(mask))


def first_out_of_range(idx, lo, hi):
    """The first value (row-major) of integer array `idx` outside [lo, hi), or None."""
    bad = (idx >= hi) | (idx < lo)
    return int(idx[bad][0]) if bad.any() else None


def _view_offsets(shape, strides):
    """Offsets (int64, row-major) of a view's elements given its shape and element strides."""
    return K.strided_offsets(np.array(shape, dtype=np.int64), np.array(strides, dtype=np.int64), 0)


def element_offsets(plan, strides):
    """Bounds-checked offsets (element `strides` of the view) that the plan's index arrays
    select; an index out of bounds raises the plan's IndexError (PyTorch's wording)."""
    plan.check_empty_dims()
    offs = np.zeros(int(np.prod(plan.index_shape)), dtype=np.int64)
    for position, (d, arr) in enumerate(zip(plan.dims, plan.arrays)):
        size = plan.shape[d]
        flat = np.broadcast_to(arr, plan.index_shape).reshape(-1)
        bad_at = K.add_index_offsets(flat, size, strides[d], offs) if offs.size else -1
        if bad_at >= 0:
            raise plan.out_of_bounds(position, int(flat[bad_at]))
    return offs


def _plan_offsets(plan, strides, words=1):
    """(before, offs, after, result_shape) for the 3-level kernels of a plan, counted in
    items of `words` movement words (2: a 16-byte item's words are the last dim of `after`)."""
    before, after = plan.rest_dims()
    before_offs = _view_offsets([plan.shape[d] for d in before], [strides[d] * words for d in before])
    after_offs = _view_offsets(*word_layout([plan.shape[d] for d in after], [strides[d] for d in after], words))
    strides = [s * words for s in strides]
    if before_offs.size and after_offs.size:
        offs = element_offsets(plan, strides)
    else:  # nothing is read or written: PyTorch checks only for indices into empty dims
        plan.check_empty_dims()
        offs = np.zeros(int(np.prod(plan.index_shape)), dtype=np.int64)
    return before_offs, offs, after_offs, plan.result_shape()


def read(data, plan):
    """data[advanced part of the plan's key]: a new array of the plan's result shape."""
    buf, strides = flat_buffer(data)
    before, offs, after, shape = _plan_offsets(plan, strides.tolist(), WORDS[data.itemsize])
    out = np.empty((before.size, offs.size, after.size // WORDS[data.itemsize]), dtype=data.dtype)
    if out.size:
        K.gather_3(movement_view(buf), before, offs, after, movement_view(out))
    return out.reshape(shape)


def write(data, plan, values, accumulate, alert=None):
    """data[advanced part] = values (+= with `accumulate`: repeated targets add up), in
    place; `values` is a C-contiguous array of data's dtype and the plan's result shape.
    The CPU's sums run in index order, deterministic: `alert` (the op CUDA reports under
    deterministic algorithms) is not raised here."""
    buf, strides = flat_buffer(data)
    words = 1 if accumulate else WORDS[data.itemsize]  # sums add items, not their words
    before, offs, after, _ = _plan_offsets(plan, strides.tolist(), words)
    if before.size * offs.size * after.size == 0:
        return
    vals = values.reshape(before.size, offs.size, after.size // words)
    if not accumulate:
        K.put_3(movement_view(buf), before, offs, after, movement_view(vals))
    elif data.dtype in _LOW:
        # Numba has no float16/bfloat16 arithmetic: add in float32 and write back.
        wide = data.astype(np.float32)
        wide_buf, wide_strides = flat_buffer(wide)
        b, o, a, _ = _plan_offsets(plan, wide_strides.tolist())
        K.put_3_add(wide_buf, b, o, a, vals.astype(np.float32))
        data[...] = wide.astype(data.dtype)
    else:
        K.put_3_add(buf, before, offs, after, vals)


def read_leading(data, index):
    """data[index] for one index array of the leading dims, through NumPy's take or boolean
    indexing (C loops: a Numba loop adds nothing, and the general plan costs ~100 us of
    Python on small arrays); None when the general path must run (other dtypes, large or
    out-of-range indices: the general path raises PyTorch's errors)."""
    if not data.ndim:
        return None
    if index.dtype == np.bool_:
        if index.shape != data.shape[:index.ndim] or not index.ndim or index.size > _SMALL:
            return None  # large masks: nonzero + the Numba gather is ~3x faster than NumPy's
        return data[index]
    if index.dtype.kind not in "iu" or index.dtype == np.uint8 or not index.size or index.size > _SMALL:
        return None  # large reads: the Numba kernel checks bounds in the same pass
    size = data.shape[0]
    if index.min() < -size or index.max() >= size:
        return None
    return data.take(index, axis=0)


def write_leading(data, index, value):
    """The CPU has no shortcut for ``data[index] = value`` with one index array: False (the
    general path runs)."""
    return False


def _in_range_arrays(data, arrays):
    """Whether the index arrays are small in-range integer arrays of data's leading dims that
    broadcast together: then NumPy's rules for the key are PyTorch's."""
    if len(arrays) > data.ndim:
        return False
    for n, a in zip(data.shape, arrays):
        if a.dtype.kind not in "iu" or a.dtype == np.uint8 or not a.size or a.size > _SMALL:
            return False
        if a.min() < -n or a.max() >= n:
            return False
    try:
        np.broadcast_shapes(*(a.shape for a in arrays))
    except ValueError:
        return False
    return True


def read_arrays(data, arrays):
    """data[arrays] through NumPy for small in-range integer index arrays of the leading
    dims (NumPy's rules are PyTorch's for such keys); None when the general path must run
    (which also raises PyTorch's errors)."""
    return data[tuple(arrays)] if _in_range_arrays(data, arrays) else None


def write_arrays(data, arrays, value):
    """data[arrays] = value through NumPy where it does exactly what PyTorch does (`value`: a
    number or an array); False when the general path must run (a shape NumPy refuses)."""
    if not _in_range_arrays(data, arrays):
        return False
    try:
        data[tuple(arrays)] = value
    except (ValueError, TypeError, OverflowError):
        return False
    return True


def nonzero_positions(data):
    """(positions, count): the flat int64 positions of `data`'s nonzero elements (row-major)."""
    found = data.reshape(-1).nonzero()[0]
    return found.astype(np.int64, copy=False), found.size


def nonzero(data, as_tuple):
    """The coordinates of data's nonzero elements: an (n, ndim) int64 array, or one 1-d int64
    array per dim with `as_tuple` (a 0-d array counts as 1-d)."""
    if as_tuple:
        return tuple(f.astype(np.int64) for f in np.nonzero(data.reshape(-1) if data.ndim == 0 else data))
    found = np.argwhere(data) if data.ndim else np.empty((int(bool(data)), 0), np.int64)
    return found.astype(np.int64)


def flip(data, axes):
    """A contiguous copy of `data` reversed along `axes`."""
    return np.array(np.flip(data, axes), order="C")


def repeat_index(counts, output_size=None):
    """[0] * counts[0] + [1] * counts[1] + ... as an int64 array (counts checked >= 0 by the
    caller; `output_size` is a hint the CPU does not need)."""
    counts = index_array(counts).reshape(-1)
    return np.repeat(np.arange(counts.size, dtype=np.int64), counts)
