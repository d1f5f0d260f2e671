"""CUDA gather and scatter (scatter_add, scatter_reduce): the device side of `index_ops`.

Offsets come from one kernel over the index (where each element reads or lands), then:
gather reads through them; scatter writes (plain writes to a repeated target keep one
of the values, as on PyTorch's GPU). Where CUDA has atomics (32/64-bit ints and floats)
sum/mean add with them (float sums may round differently from the CPU's, within
tolerance) and integer amax/amin take atomic max/min (exact). Everything else (prod,
multiply, float amax/amin, whose NaN rule CUDA's atomics do not follow, and the small
dtypes) walks each line of the index along `dim` in order on one thread
(`scatter_lines`), which gives the CPU's results exactly. float16/bfloat16 are scattered
in float32 copies.
"""
import numpy as np

from . import arrays, storage
from ... import _dtype as D
from .index_arrays import (
    _as_1d_if_0d, _contiguous_strides, _flat_buffer, _launch, _movement, _padded, _reshaped, _zeros, dim_offsets, on_device_of_first, to_index_array,
)
from .kernels import index as K
from ..._tensor import Tensor

__all__ = ["gather", "scatter"]


@on_device_of_first
def gather(input, dim, index):
    """gather for CUDA tensors (the caller has checked the arguments and the bounds)."""
    src = _as_1d_if_0d(input._data)
    idx_shape = tuple(index._data.shape) or (1,)
    idx = to_index_array(index._data)
    buf, strides = _flat_buffer(src)
    dim_stride = strides[dim]
    strides[dim] = 0
    out = storage.empty((idx.size,), src.dtype)
    padded = _padded(idx_shape, strides)
    if padded is not None:
        _launch(K.gather_dim, idx.size, _movement(buf), *padded, dim_stride, idx, _movement(out))
    else:
        _launch(K.take_flat, idx.size, _movement(buf), dim_offsets(idx_shape, strides, dim_stride, idx),
                _movement(out))
    return Tensor._wrap(_reshaped(out, index._data.shape), input._dtype, input._device)


_LINE_MODES = {"copy": K.COPY, "add": K.ADD, "sum": K.ADD, "mean": K.ADD, "multiply": K.MULTIPLY,
               "prod": K.MULTIPLY, "amax": K.AMAX, "amin": K.AMIN}


@on_device_of_first
def scatter(self, dim, index, src, mode, include_self, identity):
    """scatter/scatter_add/scatter_reduce into CUDA tensor self, in place (the caller has
    checked the arguments and the bounds). `identity` is the reduction's starting value
    for elements that receive values when not `include_self`."""
    from ..._ops import _iter
    work_dtype = _iter.compute_dtype(self._dtype)
    data = _as_1d_if_0d(self._data)
    in_place = work_dtype is self._dtype and arrays.is_c(data)
    work = data if in_place else storage.astype(data, work_dtype.np)
    flat = arrays.flat(work)
    idx_shape = tuple(index._data.shape) or (1,)
    idx = to_index_array(index._data)
    n = idx.size
    strides = _contiguous_strides(work.shape)
    dim_stride = strides[dim]
    strides[dim] = 0
    offs = dim_offsets(idx_shape, strides, dim_stride, idx)
    if isinstance(src, Tensor):
        sdata = _as_1d_if_0d(src._data)
        vals = arrays.flat(storage.astype(arrays.restride(sdata, idx_shape, sdata.strides), work_dtype.np))
    else:
        vals = storage.empty((n,), work_dtype.np)
        storage.fill_(vals, src)
    counts = None
    if mode == "mean":
        counts = storage.empty((flat.size,), np.int64)
        storage.fill_(counts, 1)
    if not include_self:
        _reset_targets(flat, offs, counts, identity, work_dtype, self._device)
    atomic = flat.dtype.kind in "fi" and flat.dtype.itemsize >= 4
    if mode == "copy":
        _launch(K.put_flat, n, _movement(flat), offs, _movement(vals))
    elif atomic and mode in ("add", "sum", "mean"):
        _launch(K.put_flat_add, n, flat, offs, vals)
        if counts is not None:
            _launch(K.count_flat, n, offs, counts)
    elif atomic and flat.dtype.kind == "i" and mode in ("amax", "amin"):
        _launch(K.put_flat_max if mode == "amax" else K.put_flat_min, n, flat, offs, vals)
    else:
        line_len = idx_shape[dim]
        inner = int(np.prod(idx_shape[dim + 1:]))
        empty_counts = storage.empty((0,), np.int64)
        _launch(K.scatter_lines, n // line_len, flat, offs, vals, line_len, inner, _LINE_MODES[mode],
                empty_counts if counts is None else counts)
    if mode == "mean":
        _divide_by_counts(flat, counts, work_dtype, self._device)
    if not in_place:
        storage.copy_(self._data, _reshaped(work, self._data.shape))


def _reset_targets(flat, offs, counts, identity, work_dtype, device):
    """Elements that receive values start from the reduction's identity (and count 0)."""
    from ..._ops.elementwise_composite import where
    marks = _zeros(flat.size, np.uint8)
    _launch(K.mark_flat, offs.size, offs, marks)
    hit = Tensor._wrap(arrays.reinterpret(marks, np.bool_), D.bool, device)
    values = Tensor._wrap(flat, work_dtype, device)
    storage.copy_(flat, where(hit, identity, values)._data)
    if counts is not None:
        storage.copy_(counts, where(hit, 0, Tensor._wrap(counts, D.int64, device))._data)


def _divide_by_counts(flat, counts, work_dtype, device):
    """scatter_reduce's mean: sums divided by counts (floor division for integers)."""
    values = Tensor._wrap(flat, work_dtype, device)
    safe = Tensor._wrap(counts, D.int64, device).clamp(min=1)
    result = values / safe if work_dtype.is_floating_point else values.floor_divide(safe)
    storage.copy_(flat, result._data)
