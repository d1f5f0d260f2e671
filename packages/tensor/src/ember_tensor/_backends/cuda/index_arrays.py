"""Device index arrays and view offsets: the helpers `_backends.cuda.indexing` and `_backends.cuda.scatter` share.

Index arrays are C-contiguous int64 device arrays. A view's element offsets come from
kernels that take its shape and strides as MAX_DIMS-tuples (`padded_layout`), or, past that
many non-mergeable dims, from an outer sum of two halves (`view_offsets`). A bounds
check reads back one value: the first bad position (a sentinel when all are good).
"""
import numpy as np

from . import arrays, elementwise, launch, layout, storage
from ..plan import WORDS, merge_dims
from .kernels import index as K

__all__ = ["index_on_device", "as_mask", "to_index_array", "read_scalar",
           "first_out_of_range", "view_offsets", "dim_offsets", "take_items", "put_items"]

_NO_BAD = np.iinfo(np.int64).max


def padded_layout(shape, strides):
    """(shape, strides) as MAX_DIMS-tuples: size-1 dims dropped, dims that walk memory
    together merged (row-major order is kept; `_backends.plan.merge_dims`), front padded
    with (1, 0); None when more than MAX_DIMS dims remain (callers then use `view_offsets`)."""
    merged = merge_dims([(int(n), int(s)) for n, s in zip(shape, strides)])
    if len(merged) > K.MAX_DIMS:
        return None
    pad = K.MAX_DIMS - len(merged)
    return (tuple([1] * pad + [n for n, _ in merged]),
            tuple([0] * pad + [s for _, s in merged]))


def view_offsets(shape, strides, base=0):
    """int64 device array: base + the element offset of each (row-major) element of a
    view of `shape` and element `strides`. Past MAX_DIMS dims it splits the dims in two
    and adds the halves' offsets as an outer sum (one broadcast add)."""
    count = int(np.prod(shape)) if len(shape) else 1
    padded = padded_layout(shape, strides)
    if padded is None:
        half = len(shape) // 2
        lead = view_offsets(shape[:half], strides[:half], base)
        tail = view_offsets(shape[half:], strides[half:])
        out = storage.empty((lead.size, tail.size), np.int64)
        elementwise.binary("add", arrays.restride(lead, out.shape, (8, 0)), arrays.restride(tail, out.shape, (0, 8)),
                     out)
        return arrays.flat(out)
    offs = storage.empty((count,), np.int64)
    launch.grid_stride(K.strided_offsets, count, *padded, base, offs)
    return offs


def dim_offsets(shape, strides, dim_stride, idx):
    """offs[i] = offset of element i of a view of `shape` (strides 0 at the indexed dim)
    plus idx[i] * dim_stride: where gather reads and scatter writes element i."""
    offs = storage.empty((idx.size,), np.int64)
    padded = padded_layout(shape, strides)
    if padded is not None:
        launch.grid_stride(K.dim_offsets, idx.size, *padded, dim_stride, idx, offs)
        return offs
    offs = view_offsets(shape, strides)
    launch.grid_stride(K.add_scaled, idx.size, offs, idx, dim_stride)
    return offs


def index_on_device(arr):
    """Host or device integer array `arr` as an int64 device array of the same shape."""
    if isinstance(arr, np.ndarray):
        return storage.from_numpy(arr.astype(np.int64, copy=False))
    return arr if arr.dtype == np.int64 else storage.astype(arr, np.int64)


def as_mask(data):
    """A bool device array of integer/bool array `data` (legacy uint8 masks; a host array
    is uploaded)."""
    if isinstance(data, np.ndarray):
        return storage.from_numpy(data.astype(np.bool_, copy=False))
    return data if data.dtype == np.bool_ else storage.astype(data, np.bool_)


def to_index_array(data):
    """A C-contiguous 1-d int64 device copy-if-needed of device (or host) integer array `data`."""
    if isinstance(data, np.ndarray):
        return storage.from_numpy(np.ascontiguousarray(data.reshape(-1), dtype=np.int64))
    if data.dtype != np.int64 or not arrays.is_c(data):
        data = storage.astype(data, np.int64)
    return arrays.flat(data)


def read_scalar(arr, i=0):
    """One element of a device array, read to the host (the one sync an op may make)."""
    return storage.to_numpy(arrays.restride(arr, (1,), (arr.dtype.itemsize,), i * arr.dtype.itemsize))[0]


def bad_flag():
    """A 1-element device array holding the no-bad-position sentinel (kernels atomic-min it)."""
    bad = storage.empty((1,), np.int64)
    storage.fill_(bad, _NO_BAD)
    return bad


def read_flag(bad):
    """The smallest bad position a kernel recorded, or None (reads one value)."""
    first = int(read_scalar(bad))
    return None if first == _NO_BAD else first


def first_out_of_range(idx, lo, hi):
    """The first value (row-major) of index array `idx` outside [lo, hi), or None."""
    idx = to_index_array(idx)
    bad = bad_flag()
    launch.grid_stride(K.first_out_of_range, idx.size, idx, lo, hi, bad)
    at = read_flag(bad)
    return None if at is None else int(read_scalar(idx, at))


def _item_words(words):
    """(before, after) of the 3-level kernels that move each item's `words` words."""
    return storage.zeros((1,), np.int64), storage.from_numpy(np.arange(words, dtype=np.int64))


def take_items(buf, offs, out):
    """out[j] = buf[offs[j]] for 1-d `buf` and `out`; `offs` counted in movement words
    (`plan.WORDS`: element strides times the words of an item)."""
    words = WORDS[buf.dtype.itemsize]
    if words == 1:
        launch.grid_stride(K.take_flat, offs.size, layout.movement(buf), offs, layout.movement(out))
        return
    before, after = _item_words(words)
    launch.grid_stride(K.gather_3, offs.size * words, layout.movement(buf), before, offs, after, layout.movement(out))


def put_items(buf, offs, vals):
    """buf[offs[j]] = vals[j] for 1-d `buf` and `vals`; `offs` counted in movement words."""
    words = WORDS[buf.dtype.itemsize]
    if words == 1:
        launch.grid_stride(K.put_flat, offs.size, layout.movement(buf), offs, layout.movement(vals))
        return
    before, after = _item_words(words)
    launch.grid_stride(K.put_3, offs.size * words, layout.movement(buf), before, offs, after, layout.movement(vals))
