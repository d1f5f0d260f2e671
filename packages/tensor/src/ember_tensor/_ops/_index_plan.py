"""Turning a PyTorch indexing key into a basic view plus the advanced part of the key.

``x[key]`` is computed in two steps, as PyTorch does: the basic entries (ints, slices,
None, Ellipsis, 0-d integer tensors) make a view of `x`; the advanced entries (integer
tensors and sequences, boolean masks) are left as index arrays on dims of that view.
Masks become the integer arrays of their nonzero positions, one per dim they cover.

Where the result's index dims go (NumPy's rule, which PyTorch follows): when the
advanced dims of the view are adjacent, the broadcast index shape replaces them in
place; otherwise it goes first. Note that an int is *basic* here (it selects before
anything else), unlike NumPy, so ``x[0, :, [0, 1]]`` has shape (3, 2), as in PyTorch.
"""
import numpy as np

from .. import _backends
from .. import _dtype as D
from .._tensor import Tensor
from .views import make_view

__all__ = ["IndexPlan", "normalize_key", "plan_index", "is_basic_key"]

_SEQUENCE = (list, tuple)


class IndexPlan:
    """The advanced part of a key, applied to `view`; the backend's `indexing.read` and
    `indexing.write` take it with the view's array (they read its shape, dims and arrays).

    Attributes:
        view: the tensor after the basic entries; `shape` is its shape.
        dims: the view's dims that the index arrays index (ascending).
        arrays: int64 arrays, one per dim, broadcast together to `index_shape`, on the
            view's device.
        adjacent: whether `dims` are consecutive (the index dims stay in place).
    """

    __slots__ = ("view", "shape", "dims", "arrays", "index_shape", "adjacent")

    def __init__(self, view, dims, arrays):
        self.view = view
        self.shape = tuple(view._data.shape)
        self.dims = dims
        self.adjacent = dims == list(range(dims[0], dims[0] + len(dims)))
        try:
            self.index_shape = np.broadcast_shapes(*(a.shape for a in arrays))
        except ValueError:
            shapes = ", ".join(str(list(a.shape)) for a in arrays)
            raise IndexError(
                f"shape mismatch: indexing tensors could not be broadcast together with shapes {shapes}"
            ) from None
        self.arrays = arrays

    def rest_dims(self):
        """(before, after): the view's unindexed dims that go before/after the index dims."""
        others = [d for d in range(len(self.shape)) if d not in self.dims]
        if self.adjacent:
            return [d for d in others if d < self.dims[0]], [d for d in others if d > self.dims[-1]]
        return [], others

    def result_shape(self):
        """Shape of ``view[advanced part]``."""
        shape = self.shape
        before, after = self.rest_dims()
        return tuple(shape[d] for d in before) + tuple(self.index_shape) + tuple(shape[d] for d in after)

    def check_empty_dims(self):
        """PyTorch's error for indices into a dim of size 0 (checked even for empty results)."""
        for d, arr in zip(self.dims, self.arrays):
            if self.shape[d] == 0 and arr.size and int(np.prod(self.index_shape)):
                raise IndexError("index is out of bounds for dimension with size 0")

    def out_of_bounds(self, position, value):
        """PyTorch's IndexError for index `value` of the `position`-th index array (the
        backend finds it while computing the offsets)."""
        return IndexError(f"index {value} is out of bounds for dimension {position} "
                          f"with size {self.shape[self.dims[position]]}")


def is_basic_key(key):
    """Whether every entry is an int, slice, None or Ellipsis (the result is a view)."""
    for k in key:
        if k is None or k is Ellipsis or isinstance(k, slice):
            continue
        if isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_)):
            continue
        return False
    return True


def normalize_key(key):
    """The key as a tuple, with PyTorch's rule for a list that means a tuple."""
    if isinstance(key, tuple):
        return key
    if isinstance(key, list) and len(key) < 32 and any(
            isinstance(k, (Tensor, list, tuple, slice)) or k is None or k is Ellipsis for k in key):
        return tuple(key)  # legacy: x[[0, slice(None)]] is x[0, :]
    return (key,)


# A float index: it takes a dim like any index tensor, and is refused after the basic
# entries, in key order with the mask checks (where PyTorch refuses it).
_NOT_AN_INDEX = np.zeros(1, dtype=np.float64)


def _as_index_array(k, device):
    """Array of an advanced entry: int64 indices, or a bool mask; a tensor's stays on its
    device when the indexed tensor (on `device`) is there too."""
    if isinstance(k, Tensor):
        if k._dtype.category == D._FLOAT:
            return _NOT_AN_INDEX  # PyTorch raises only after the basic entries are applied
        if k._device == device and k._data.ndim:
            indexing = _backends.get(device).indexing
            if k._dtype is D.uint8 or k._dtype is D.bool:
                return indexing.mask_array(k._data)  # legacy byte masks too
            return indexing.index_array(k._data)
        arr = k._host_numpy()
        if k._dtype is D.uint8:
            return arr.astype(np.bool_)  # legacy byte masks
        return arr if arr.dtype == np.bool_ else arr.astype(np.int64, copy=False)
    if isinstance(k, (bool, np.bool_)):
        return np.array(bool(k))
    if isinstance(k, np.ndarray):
        arr = k
    else:
        if isinstance(k, _SEQUENCE):
            k = [x.item() if isinstance(x, Tensor) else x for x in k] if any(
                isinstance(x, Tensor) for x in k) else k
        arr = np.array(k)
    if arr.dtype == np.bool_:
        return arr
    if arr.size == 0:
        return arr.astype(np.int64)
    if arr.dtype.kind not in "iu":
        return _NOT_AN_INDEX
    return arr.astype(np.int64, copy=False)


def _classify(k, device):
    """('none' | 'ellipsis' | 'int' | 'slice' | 'array', value)."""
    if k is None:
        return "none", None
    if k is Ellipsis:
        return "ellipsis", None
    if isinstance(k, slice):
        return "slice", k
    if isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_)):
        return "int", int(k)
    if isinstance(k, Tensor) and k._data.ndim == 0 and k._dtype.category == D._INT and k._dtype is not D.uint8:
        return "int", k.item()  # a 0-d integer tensor selects like an int
    if isinstance(k, range):  # x[range(n), y]: a list of those integers, as in PyTorch
        k = list(k)
    if isinstance(k, (Tensor, np.ndarray, list, tuple, bool, np.bool_)):
        return "array", _as_index_array(k, device)
    raise IndexError(
        "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices "
        f"(got {type(k).__name__})")


def _dims_consumed(kind, value):
    if kind in ("int", "slice"):
        return 1
    if kind == "array":
        return value.ndim if value.dtype == np.bool_ else 1
    return 0


def _deferred_checks(checks, view_shape):
    """The checks PyTorch makes after the basic entries, in key order: float index tensors
    are refused, and each mask must match the view it indexes (after any None), named by
    that view's shape and the mask's position in it."""
    for mask, start in checks:
        if mask is None:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        for j, n in enumerate(mask.shape):
            if n != view_shape[start + j]:
                raise IndexError(
                    f"The shape of the mask {list(mask.shape)} at index {j} does not match the shape "
                    f"of the indexed tensor {list(view_shape)} at index {start + j}")


def plan_index(self, key):
    """(view, plan): the view the basic entries of `key` select, and an `IndexPlan` for the
    advanced entries (None when there are none)."""
    indexing = _backends.get(self._device).indexing
    entries = [_classify(k, self._device) for k in key]
    ndim = self._data.ndim
    if sum(1 for kind, _ in entries if kind == "ellipsis") > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(_dims_consumed(kind, v) for kind, v in entries)
    if consumed > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    shape, strides = self._data.shape, self.stride()
    offset = self.storage_offset()
    new_shape, new_strides, adv_dims, arrays, checks = [], [], [], [], []
    d = 0
    for position, (kind, value) in enumerate(entries):
        if kind == "ellipsis":
            for _ in range(ndim - consumed):
                new_shape.append(shape[d])
                new_strides.append(strides[d])
                d += 1
        elif kind == "none":
            new_shape.append(1)
            new_strides.append(0)
        elif kind == "int":
            size = shape[d]
            if not -size <= value < size:
                # PyTorch's "dimension" here is the entry's position in the key.
                raise IndexError(f"index {value} is out of bounds for dimension {position} with size {size}")
            offset += (value % size) * strides[d]
            d += 1
        elif kind == "slice":
            if value.step is not None and value.step <= 0:
                if value.step == 0:
                    raise ValueError("slice step cannot be zero")
                raise ValueError("step must be greater than zero")
            start, stop, step = value.indices(shape[d])
            n = max(0, -(-(stop - start) // step))
            offset += start * strides[d] if n else 0
            new_shape.append(n)
            new_strides.append(strides[d] * step)
            d += 1
        elif value is _NOT_AN_INDEX:
            checks.append((None, None))
            new_shape.append(shape[d])
            new_strides.append(strides[d])
            d += 1
        elif value.dtype == np.bool_:
            if value.ndim == 0:  # x[True]: a new dim of size 1, kept (True) or emptied (False)
                new_shape.append(1)
                new_strides.append(0)
                adv_dims.append(len(new_shape) - 1)
                arrays.append(np.zeros(1 if value else 0, dtype=np.int64))
                continue
            checks.append((value, len(new_shape)))
            for positions in indexing.mask_positions(indexing.mask_array(value)):
                new_shape.append(shape[d])
                new_strides.append(strides[d])
                adv_dims.append(len(new_shape) - 1)
                arrays.append(positions)
                d += 1
        else:
            new_shape.append(shape[d])
            new_strides.append(strides[d])
            adv_dims.append(len(new_shape) - 1)
            arrays.append(value)
            d += 1
    new_shape.extend(shape[d:])
    new_strides.extend(strides[d:])
    _deferred_checks(checks, new_shape)
    view = make_view(self, new_shape, new_strides, offset)
    if not adv_dims:
        return view, None
    return view, IndexPlan(view, adv_dims, [indexing.index_array(a) for a in arrays])
