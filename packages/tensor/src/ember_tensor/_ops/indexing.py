"""Tensor indexing with PyTorch's rules: ``x[key]`` and ``x[key] = value``.

Basic keys (ints, slices with positive steps, None, Ellipsis) give views. Advanced keys
(integer tensors or lists at any position, boolean masks) copy: `_index_plan` splits a key
into a basic view and index arrays on the view's device, and the device's `indexing`
backend family moves the elements (`read`, `write`). Each backend may also have a
shortcut for a common key (`read_leading`, `read_arrays`, ...: NumPy's own indexing on
the CPU, flat mask positions on CUDA) that returns None when the general path must run.
``index_put_`` (the accumulate form of assignment) lives here too, since it is
``x[indices] = values`` with another spelling. cat/stack join tensors.
"""
import numpy as np

from .. import _backends
from .. import _dtype as D
from .._dispatch import op
from .._tensor import Tensor
from . import _iter
from ._index_plan import is_basic_key, normalize_key, plan_index

__all__ = ["getitem", "setitem_", "index_put", "index_put_", "cat", "concat", "concatenate", "stack",
           "hstack", "vstack"]


def _indexing(t):
    """The indexing family of `t`'s backend."""
    return _backends.get(t._device).indexing


def _advanced_read(plan):
    """view[advanced part of the key] as a new tensor."""
    view = plan.view
    return Tensor._wrap(_indexing(view).read(view._data, plan), view._dtype, view._device)


def array_on(value, device):
    """The array of tensor `value` on `device` (copied there when it lives elsewhere)."""
    if value._device == device:
        return value._data
    return _backends.get(device).storage.from_numpy(value._host_numpy(), device)


def _value_array(value, dtype, shape, device):
    """`value` (tensor or number) as a C-contiguous array on `device` of `dtype` broadcast
    to `shape` (PyTorch drops leading 1s of a value tensor)."""
    storage = _backends.get(device).storage
    if not isinstance(value, Tensor):
        return storage.fill_(storage.empty(tuple(shape), dtype.np), value)
    arr = array_on(value, device)
    value_shape = tuple(arr.shape)
    while len(value_shape) > len(shape) and value_shape[0] == 1:
        value_shape = value_shape[1:]
    fits = len(value_shape) <= len(shape) and all(
        m in (1, n) for m, n in zip(value_shape[::-1], tuple(shape)[::-1]))
    if not fits:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(value_shape)} cannot be broadcast "
                           f"to indexing result of shape {list(shape)}")
    arr = storage.broadcast_to(arr.reshape(value_shape), tuple(shape))
    if arr.dtype != dtype.np:
        arr = storage.astype(arr, dtype.np)
    return storage.contiguous(arr)


def _advanced_write(plan, value, accumulate, alert=None):
    """view[advanced part] = value (+= with `accumulate`), in place (the caller bumps the
    version); `alert` names the op to the backend where a device's accumulation has no
    deterministic form in PyTorch (put_ on CUDA)."""
    view = plan.view
    values = _value_array(value, view._dtype, plan.result_shape(), view._device)
    _indexing(view).write(view._data, plan, values, accumulate, alert=alert)


def _key_arrays(self, key):
    """The arrays of a key made only of integer index tensors on self's device and lists,
    for the backend's `read_arrays`/`write_arrays` shortcut; None for any other key."""
    if len(key) > self._data.ndim:
        return None
    arrays = []
    for k in key:
        if k.__class__ is Tensor:
            if k._device != self._device:
                return None
            arrays.append(k._data)
        elif k.__class__ is list:
            arrays.append(np.asarray(k))
        else:
            return None
    return arrays


@op()
def getitem(self, key):
    """self[key] with PyTorch's indexing rules (views for basic keys, copies otherwise).

    >>> x = arange(6).reshape(2, 3)
    >>> x[[1, 0], [2, 0]]
    tensor([5, 0])
    """
    if key.__class__ is Tensor and key._device == self._device:
        fast = _indexing(self).read_leading(self._data, key._data)
        if fast is not None:
            return Tensor._wrap(fast, self._dtype, self._device)
    key = normalize_key(key)
    if self._data.ndim == 0 and is_basic_key(key) and any(
            isinstance(k, (int, np.integer)) for k in key):
        raise IndexError(
            "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` "
            "in C++ to convert a 0-dim tensor to a number")
    arrays = _key_arrays(self, key)
    if arrays is not None:
        fast = _indexing(self).read_arrays(self._data, arrays)
        if fast is not None:
            return Tensor._wrap(fast, self._dtype, self._device)
    view, plan = plan_index(self, key)
    if plan is None:
        return view
    return _advanced_read(plan)


@op("setitem_", inplace=True)
def setitem_(self, key, value):
    """self[key] = value, broadcasting `value`; writes through to self's storage."""
    if value.__class__ is Tensor and value._dtype is not self._dtype:
        _check_advanced_write_dtype(self, key, value)
    value_array = _shortcut_value(self, value)
    if key.__class__ is Tensor and key._device == self._device and value_array is not None:
        if _indexing(self).write_leading(self._data, key._data, value_array):
            self._bump_version()
            return self
    key = normalize_key(key)
    arrays = _key_arrays(self, key)
    if arrays is not None and value_array is not None:
        if _indexing(self).write_arrays(self._data, arrays, value_array):
            self._bump_version()
            return self
    view, plan = plan_index(self, key)
    if plan is None:
        if isinstance(value, Tensor):
            view.copy_(_without_extra_leading_ones(value, view._data.ndim))
        else:
            view.fill_(value)
    else:
        _advanced_write(plan, value, accumulate=False)
    self._bump_version()
    return self


def _check_advanced_write_dtype(self, key, value):
    """Refuse a `value` of another dtype where `key` has an advanced index, as PyTorch does.

    PyTorch writes through an advanced index with index_put_, which requires the source's
    dtype to be the destination's; a basic key (ints, slices) copies and converts instead,
    and so does a lone boolean mask with a single value (PyTorch sends it to masked_fill_).
    """
    advanced = [k for k in normalize_key(key) if _is_advanced_entry(k)]
    if not advanced:
        return
    if len(advanced) == 1 and isinstance(advanced[0], Tensor) and advanced[0]._dtype is D.bool \
            and value._data.size == 1:
        return
    raise RuntimeError(
        f"Index put requires the source and destination dtypes match, got "
        f"{_iter.type_name(self._dtype)} for the destination and {_iter.type_name(value._dtype)} for the source.")


def _is_advanced_entry(k):
    if isinstance(k, Tensor):
        # A 0-d integer tensor selects like an int (a basic index).
        return not (k._data.ndim == 0 and k._dtype.category == D._INT and k._dtype is not D.uint8)
    return isinstance(k, (list, tuple, range, np.ndarray))


def _without_extra_leading_ones(value, ndim):
    """`value` without the leading size-1 dims it has beyond `ndim` (PyTorch drops them:
    ``t[0] = v`` with v of shape (1, 1, 4) for a row of 4)."""
    extra = value._data.ndim - ndim
    if extra > 0 and all(n == 1 for n in value._data.shape[:extra]):
        return value.reshape(value._data.shape[extra:])
    return value


def _shortcut_value(self, value):
    """`value` as the backend shortcuts take it: a Python number, or the array of a tensor
    on self's device; None for anything else (the general path runs)."""
    if isinstance(value, Tensor):
        return value._data if value._device == self._device else None
    return value if isinstance(value, (int, float, bool)) else None


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
