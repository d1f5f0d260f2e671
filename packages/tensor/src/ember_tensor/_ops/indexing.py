"""Tensor indexing with PyTorch's rules: ``x[key]`` and ``x[key] = value``.

Basic keys (ints, slices with positive steps, None, Ellipsis) give views. Advanced keys
(integer tensors or lists at any position, boolean masks) copy: `_index_plan` splits a key
into a basic view and index arrays, and the Numba kernels of `_kernels/cpu_index` move the
elements (on CUDA, the device kernels of `_backends.cuda.indexing`: index arrays stay on the device). ``index_put_`` (the accumulate form of assignment) lives here too, since it is
``x[indices] = values`` with another spelling. cat/stack join tensors.
"""
import numpy as np

from .. import _backends
from .. import _dtype as D
from .._dispatch import op
from .._tensor import Tensor
from .._backends.lazy import lazy, lazy_module

K = lazy("cpu.kernels.index")  # Numba loads on first use
_cuda_index = lazy_module("ember_tensor._backends.cuda.indexing")  # numba.cuda loads on first CUDA use
from . import _iter
from ._index_plan import is_basic_key, normalize_key, plan_index
from ._strided import flat_buffer, host, wrap, write_back

__all__ = ["getitem", "setitem_", "index_put", "index_put_", "cat", "concat", "concatenate", "stack",
           "hstack", "vstack", "movement_view", "gather_offsets"]

_UINT_OF_SIZE = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_SMALL = 1 << 16  # index sizes read through NumPy's take (see _single_tensor_read)


def movement_view(arr):
    """`arr` viewed as unsigned integers of the same size: kernels that only move elements
    then compile once per item size (and work for float16/bfloat16, which Numba lacks)."""
    return arr.view(_UINT_OF_SIZE[arr.dtype.itemsize])


def gather_offsets(shape, strides):
    """Offsets (int64, row-major) of a view's elements given its shape and element strides."""
    return K.strided_offsets(np.array(shape, dtype=np.int64), np.array(strides, dtype=np.int64), 0)


def _plan_offsets(plan, strides):
    """(before, offs, after, result_shape) for the 3-level kernels of a plan."""
    shape = plan.view._data.shape
    before, after = plan.rest_dims()
    before_offs = gather_offsets([shape[d] for d in before], [strides[d] for d in before])
    after_offs = gather_offsets([shape[d] for d in after], [strides[d] for d in after])
    if before_offs.size and after_offs.size:
        offs = plan.element_offsets(strides)
    else:  # nothing is read or written: PyTorch checks only for indices into empty dims
        plan.check_empty_dims()
        offs = np.zeros(int(np.prod(plan.index_shape)), dtype=np.int64)
    return before_offs, offs, after_offs, plan.result_shape()


def _advanced_read(plan):
    view = plan.view
    if view._device.type == "cuda":
        return _cuda_index.advanced_read(plan)
    arr = host(view)
    buf, strides = flat_buffer(arr)
    before, offs, after, shape = _plan_offsets(plan, strides.tolist())
    out = np.empty((before.size, offs.size, after.size), dtype=arr.dtype)
    if out.size:
        K.gather_3(movement_view(buf), before, offs, after, movement_view(out))
    return wrap(out.reshape(shape), view._dtype, view._device)


def _value_array(value, dtype, shape):
    """`value` (tensor or number) as a host array of `dtype` broadcast to `shape`."""
    if isinstance(value, Tensor):
        arr = value._host_numpy()
        while arr.ndim > len(shape) and arr.shape[0] == 1:
            arr = arr[0]  # PyTorch drops leading 1s of the value
    else:
        arr = np.asarray(value)
    try:
        arr = np.broadcast_to(arr, shape)
    except ValueError:
        raise RuntimeError(
            f"shape mismatch: value tensor of shape {list(np.shape(arr))} cannot be broadcast to "
            f"indexing result of shape {list(shape)}") from None
    return np.ascontiguousarray(arr.astype(dtype.np, copy=False))


def _advanced_write(plan, value, accumulate):
    view = plan.view
    if view._device.type == "cuda":
        _cuda_index.advanced_write(plan, value, accumulate)
        return
    arr = host(view)
    buf, strides = flat_buffer(arr)
    before, offs, after, shape = _plan_offsets(plan, strides.tolist())
    if before.size * offs.size * after.size == 0:
        _value_array(value, view._dtype, shape)  # still check the value's shape
        return
    vals = _value_array(value, view._dtype, shape).reshape(before.size, offs.size, after.size)
    if not accumulate:
        K.put_3(movement_view(buf), before, offs, after, movement_view(vals))
    elif view._dtype in _iter.LOW_PRECISION:
        # Numba has no float16/bfloat16 arithmetic: add in float32 and write back.
        wide = arr.astype(np.float32)
        wide_buf, wide_strides = flat_buffer(wide)
        b, o, a, _ = _plan_offsets(plan, wide_strides.tolist())
        K.put_3_add(wide_buf, b, o, a, vals.astype(np.float32))
        arr[...] = wide.astype(arr.dtype)
    else:
        K.put_3_add(buf, before, offs, after, vals)
    write_back(view, arr)


def _single_tensor_read(self, index):
    """x[int_tensor] or x[bool_mask] on the CPU through NumPy's take / boolean indexing
    (C loops: a Numba loop adds nothing, and the general plan costs ~100 us of Python on
    small tensors). None when the general path must run (other dtypes, bad indices)."""
    arr, idx = self._data, index._data
    if not arr.ndim:
        return None
    if idx.dtype == np.bool_:
        if idx.shape != arr.shape[:idx.ndim] or not idx.ndim or idx.size > _SMALL:
            return None  # large masks: nonzero + the Numba gather is ~3x faster than NumPy's
        return Tensor._wrap(arr[idx], self._dtype, self._device)
    if idx.dtype.kind not in "iu" or idx.dtype == np.uint8 or not idx.size or idx.size > _SMALL:
        return None  # large reads: the Numba kernel checks bounds in the same pass
    size = arr.shape[0]
    if idx.min() < -size or idx.max() >= size:
        return None  # the general path raises PyTorch's error
    return Tensor._wrap(arr.take(idx, axis=0), self._dtype, self._device)


def _is_full_cuda_mask(self, key):
    """Whether key is a bool CUDA tensor shaped like CUDA tensor self (``x[x > 0]``): the
    device then works on flat positions, without per-dim index arrays."""
    return (key.__class__ is Tensor and key._dtype is D.bool and self._device.type == "cuda"
            and key._device == self._device and self._data.ndim > 0 and key._data.shape == self._data.shape)


def _numpy_key(self, key):
    """For a small key made only of in-range integer index arrays (tensors, lists) on the
    CPU, the NumPy key (NumPy's rules are PyTorch's for such keys); else None, and the
    general path runs (and raises PyTorch's errors)."""
    if self._device.type != "cpu" or len(key) > self._data.ndim:
        return None
    shape = self._data.shape
    arrays = []
    for d, k in enumerate(key):
        if k.__class__ is Tensor:
            if k._device.type != "cpu":
                return None
            a = k._data
        elif k.__class__ is list:
            a = np.asarray(k)
        else:
            return None
        if a.dtype.kind not in "iu" or a.dtype == np.uint8 or not a.size or a.size > _SMALL:
            return None
        if a.min() < -shape[d] or a.max() >= shape[d]:
            return None
        arrays.append(a)
    try:
        np.broadcast_shapes(*(a.shape for a in arrays))
    except ValueError:
        return None
    return tuple(arrays)


@op()
def getitem(self, key):
    """self[key] with PyTorch's indexing rules (views for basic keys, copies otherwise).

    >>> x = arange(6).reshape(2, 3)
    >>> x[[1, 0], [2, 0]]
    tensor([5, 0])
    """
    if key.__class__ is Tensor and self._device.type == "cpu" and key._device.type == "cpu":
        fast = _single_tensor_read(self, key)
        if fast is not None:
            return fast
    if _is_full_cuda_mask(self, key):
        return _cuda_index.masked_select(self, key)
    key = normalize_key(key)
    if self._data.ndim == 0 and is_basic_key(key) and any(
            isinstance(k, (int, np.integer)) for k in key):
        raise IndexError(
            "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` "
            "in C++ to convert a 0-dim tensor to a number")
    np_key = _numpy_key(self, key)
    if np_key is not None:
        return Tensor._wrap(self._data[np_key], self._dtype, self._device)
    view, plan = plan_index(self, key)
    if plan is None:
        return view
    return _advanced_read(plan)


@op("setitem_", inplace=True)
def setitem_(self, key, value):
    """self[key] = value, broadcasting `value`; writes through to self's storage."""
    if _is_full_cuda_mask(self, key):
        _cuda_index.masked_put(self, key, value)
        self._bump_version()
        return self
    key = normalize_key(key)
    np_key = _numpy_key(self, key)
    if np_key is not None and _numpy_assign(self, np_key, value):
        self._bump_version()
        return self
    view, plan = plan_index(self, key)
    if plan is None:
        if isinstance(value, Tensor):
            view.copy_(value)
        else:
            view.fill_(value)
    else:
        _advanced_write(plan, value, accumulate=False)
    self._bump_version()
    return self


def _numpy_assign(self, np_key, value):
    """self._data[np_key] = value when NumPy can do exactly what PyTorch does; False when
    the general path must run (a CUDA value, a shape NumPy refuses)."""
    if isinstance(value, Tensor):
        if value._device.type != "cpu":
            return False
        value = value._data
    elif not isinstance(value, (int, float, bool)):
        return False
    try:
        self._data[np_key] = value
    except (ValueError, TypeError, OverflowError):
        return False
    return True


def _setitem(self, key, value):
    setitem_(self, key, value)


def _index_put_key(self, indices):
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"index_put_(): argument 'indices' must be tuple of Tensors, not {type(indices).__name__}")
    if len(indices) > self._data.ndim:
        raise IndexError(f"too many indices for tensor of dimension {self._data.ndim} "
                         f"(got {len(indices)})")
    # In index_put, None stands for a whole dim (a slice), not for a new axis.
    return tuple(slice(None) if i is None else i for i in indices)


@op("index_put_", inplace=True)
def index_put_(self, indices, values, accumulate=False):
    """self[indices] = values (or += with `accumulate`, where repeated indices add up).

    >>> x = zeros(3)
    >>> x.index_put_((tensor([0, 0, 2]),), tensor(1.), accumulate=True)
    tensor([2., 0., 1.])
    """
    if not isinstance(values, Tensor):
        raise TypeError(f"index_put_(): argument 'values' must be Tensor, not {type(values).__name__}")
    if values._dtype is not self._dtype:
        raise RuntimeError(
            f"Index put requires the source and destination dtypes match, got "
            f"{_iter.type_name(self._dtype)} for the destination and {_iter.type_name(values._dtype)} for the source.")
    key = _index_put_key(self, indices)
    view, plan = plan_index(self, key)
    if plan is None:
        if accumulate:
            view.add_(values)
        else:
            view.copy_(values)
    else:
        _advanced_write(plan, values, accumulate)
    self._bump_version()
    return self


@op()
def index_put(input, indices, values, accumulate=False):
    """Out-of-place `index_put_`: a copy of `input` with ``[indices] = values``."""
    return index_put_(input.clone(), indices, values, accumulate)


def cat_shape(tensors, dim):
    """Check shapes for cat along `dim` and return the result shape."""
    ref = next((t for t in tensors if not (t._data.ndim == 1 and t._data.shape[0] == 0)), tensors[0])
    ndim = ref._data.ndim
    if ndim == 0:
        raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
    from .._tensor import wrap_dim
    dim = wrap_dim(dim, ndim)
    total = 0
    for i, t in enumerate(tensors):
        if t._data.ndim == 1 and t._data.shape[0] == 0 and ndim != 1:
            continue  # legacy: empty 1-d tensors are skipped
        if t._data.ndim != ndim:
            raise RuntimeError(
                f"Tensors must have same number of dimensions: got {ndim} and {t._data.ndim}")
        for d in range(ndim):
            if d != dim and t._data.shape[d] != ref._data.shape[d]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {dim}. Expected size "
                    f"{ref._data.shape[d]} but got size {t._data.shape[d]} for tensor number {i} in the list.")
        total += t._data.shape[dim]
    shape = list(ref._data.shape)
    shape[dim] = total
    return tuple(shape), dim


@op()
def cat(tensors, dim=0, *, out=None):
    """Concatenate tensors along an existing dim."""
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    shape, dim = cat_shape(tensors, dim)
    dtype = D.result_type_of(tensors) if len({t._dtype for t in tensors}) > 1 else tensors[0]._dtype
    device = _iter.common_device(tensors)
    backend = _backends.get(device)
    data = backend.storage.empty(shape, dtype.np)
    result = Tensor._wrap(data, dtype, device)
    start = 0
    for t in tensors:
        if t._data.ndim == 1 and t._data.shape[0] == 0 and len(shape) != 1:
            continue
        n = t._data.shape[dim]
        result.narrow(dim, start, n).copy_(t)
        start += n
    if out is not None:
        from .elementwise import copy_to_out
        return copy_to_out(result, out)
    return result


concat = concatenate = cat


@op()
def stack(tensors, dim=0, *, out=None):
    """Stack same-shape tensors along a new dim."""
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    shape = tensors[0]._data.shape
    for i, t in enumerate(tensors):
        if t._data.shape != shape:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(shape)} at entry 0 "
                f"and {list(t._data.shape)} at entry {i}")
    from .._tensor import wrap_dim
    dim = wrap_dim(dim, len(shape) + 1)
    return cat([t.unsqueeze(dim) for t in tensors], dim, out=out)


def hstack(tensors):
    """Stack horizontally (dim 1, or dim 0 for 1-d tensors)."""
    tensors = [t if t.dim() else t.reshape(1) for t in tensors]
    return cat(tensors, 0 if tensors[0].dim() == 1 else 1)


def vstack(tensors):
    """Stack vertically (rows); 1-d tensors become rows."""
    return cat([t.reshape(1, -1) if t.dim() < 2 else t for t in tensors], 0)
