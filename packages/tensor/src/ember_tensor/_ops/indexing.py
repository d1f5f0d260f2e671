"""Tensor indexing: basic indexing (ints, slices, None, ...) returns views; advanced
indexing (integer/bool tensors, lists) gathers a copy with NumPy's (= PyTorch's) rules."""
import numpy as np

from .. import _backends
from .. import _dtype as D
from .._dispatch import op
from .._tensor import Tensor
from . import _iter
from .views import make_view


def _is_basic(item):
    return item is None or item is Ellipsis or isinstance(item, (int, slice, np.integer)) and not isinstance(item, bool)


def _expand_ellipsis(key, ndim):
    consumed = sum(1 for k in key if k is not None and k is not Ellipsis)
    if sum(1 for k in key if k is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if consumed > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    out = []
    for k in key:
        if k is Ellipsis:
            out.extend([slice(None)] * (ndim - consumed))
        else:
            out.append(k)
    return out


def basic_view(self, key):
    """The view that a key of ints, slices, None and Ellipsis selects."""
    ndim = self._data.ndim
    key = _expand_ellipsis(key, ndim)
    shape, strides = self._data.shape, self.stride()
    offset = self.storage_offset()
    new_shape, new_strides = [], []
    d = 0
    for k in key:
        if k is None:
            new_shape.append(1)
            new_strides.append(0)
            continue
        if d >= ndim:
            raise IndexError(f"too many indices for tensor of dimension {ndim}")
        size = shape[d]
        if isinstance(k, slice):
            if k.step is not None and k.step <= 0:
                if k.step == 0:
                    raise ValueError("slice step cannot be zero")
                raise ValueError("step must be greater than zero")
            start, stop, step = k.indices(size)
            n = max(0, -(-(stop - start) // step))
            offset += start * strides[d] if n else 0
            new_shape.append(n)
            new_strides.append(strides[d] * step)
        else:
            k = int(k)
            if not -size <= k < size:
                raise IndexError(f"index {k} is out of bounds for dimension {d} with size {size}")
            offset += (k % size) * strides[d]
        d += 1
    new_shape.extend(shape[d:])
    new_strides.extend(strides[d:])
    return make_view(self, new_shape, new_strides, offset)


def _normalize_key(key):
    if not isinstance(key, tuple):
        key = (key,)
    return key


def _to_numpy_index(k, device):
    if isinstance(k, Tensor):
        if k._dtype.category == D._FLOAT:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        return k._host_numpy()
    if isinstance(k, (list,)) and any(isinstance(x, Tensor) for x in k):
        return np.array([x.item() if isinstance(x, Tensor) else x for x in k])
    return k


def _check_advanced_bounds(self, key):
    # A readable IndexError naming the dimension and size, before NumPy's own message.
    d = 0
    for k in key:
        if k is None:
            continue
        if k is Ellipsis:
            d = self._data.ndim - sum(1 for x in key[key.index(k) + 1:] if x is not None)
            continue
        if isinstance(k, np.ndarray) and k.dtype.kind in "iu" and k.size:
            size = self._data.shape[d] if d < self._data.ndim else 0
            bad = k[(k >= size) | (k < -size)]
            if bad.size:
                raise IndexError(f"index {int(bad.reshape(-1)[0])} is out of bounds for dimension {d} with size {size}")
        d += k.ndim if isinstance(k, np.ndarray) and k.dtype == np.bool_ else 1


@op()
def getitem(self, key):
    """self[key] with PyTorch's indexing rules."""
    key = _normalize_key(key)
    if self._data.ndim == 0 and any(k is not None and k is not Ellipsis for k in key) and all(
            _is_basic(k) for k in key) and any(isinstance(k, (int, np.integer)) for k in key):
        raise IndexError(
            "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` "
            "in C++ to convert a 0-dim tensor to a number")
    if all(_is_basic(k) for k in key):
        return basic_view(self, key)
    np_key = tuple(_to_numpy_index(k, self._device) for k in key)
    for k in np_key:
        if isinstance(k, slice) and k.step is not None and k.step < 0:
            raise ValueError("step must be greater than zero")
    _check_advanced_bounds(self, np_key)
    host = self._host_numpy()
    result = np.array(host[np_key])
    data = result if self._device.type == "cpu" else _backends.get(self._device).from_numpy(result, self._device)
    return Tensor._wrap(data, self._dtype, self._device)


@op("setitem_", inplace=True)
def setitem_(self, key, value):
    """self[key] = value, broadcasting `value`; writes through to self's storage."""
    key = _normalize_key(key)
    if all(_is_basic(k) for k in key):
        target = basic_view(self, key)
        if isinstance(value, Tensor):
            target.copy_(value)
        else:
            target.fill_(value)
        self._bump_version()
        return self
    np_key = tuple(_to_numpy_index(k, self._device) for k in key)
    _check_advanced_bounds(self, np_key)
    if isinstance(value, Tensor):
        value = value._host_numpy()
    if self._device.type == "cpu":
        self._data[np_key] = value
    else:
        host = self._host_numpy().copy()
        host[np_key] = value
        _backends.get(self._device).copy_(self._data, _backends.get(self._device).from_numpy(host, self._device))
    self._bump_version()
    return self


def _setitem(self, key, value):
    setitem_(self, key, value)


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
    data = backend.empty(shape, dtype.np)
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
