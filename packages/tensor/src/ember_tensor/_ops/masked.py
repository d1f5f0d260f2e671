"""Flat-position and mask ops: take, put/put_, masked_fill/scatter/select (and in-place
forms), nonzero and argwhere. Re-exported by `index_ops`, whose along-a-dim ops they
complement; like them they run on the index plan and the device's `indexing` backend
family (on CUDA nonzero reads back only its count).
"""
from .. import _backends
from .. import _dtype as D
from .._dispatch import op
from .._runtime.determinism import alert_not_deterministic
from .._tensor import Tensor
from . import _iter
from . import indexing as _indexing
from ._index_plan import IndexPlan
from .indexing import _advanced_read, _advanced_write

__all__ = ["take", "put", "put_", "masked_fill", "masked_fill_", "masked_scatter", "masked_scatter_",
           "masked_select", "nonzero", "argwhere"]


def _check_int_index(index, name, expected="int32/int64"):
    if not isinstance(index, Tensor):
        raise TypeError(f"{name}(): argument 'index' must be Tensor, not {type(index).__name__}")
    if index._dtype not in (D.int64, D.int32):
        raise RuntimeError(f"{name}(): Expected dtype {expected} for index")


def _maybe_out(result, out):
    if out is None:
        return result
    from .elementwise import copy_to_out
    return copy_to_out(result, out)


# --- flat-position ops ------------------------------------------------------------------

def _flat_indices(index, numel, device):
    """`index` as a flat int64 array on `device`, bounds checked."""
    indexing = _backends.get(device).indexing
    arr = indexing.index_vector(_indexing.array_on(index, device))
    bad = indexing.first_out_of_range(arr, -numel, numel)
    if bad is not None:
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {numel} elements.")
    return arr


@op()
def take(input, index):
    """`input` read as a 1-d (row-major) tensor, at positions `index`; shaped like `index`.

    >>> take(tensor([[4, 3], [5, 6]]), tensor([0, 3]))
    tensor([4, 6])
    """
    _check_int_index(index, "take", "int64")
    flat = input.reshape(-1)
    arr = _flat_indices(index, flat._data.size, input._device)
    return _advanced_read(IndexPlan(flat, [0], [arr])).reshape(index.shape)


@op("put_", inplace=True)
def put_(self, index, source, accumulate=False):
    """Write `source` into self read as 1-d (row-major) at positions `index`."""
    if not accumulate:
        # Which of several writes to one position wins is unspecified, on every device.
        alert_not_deterministic("put_")
    _check_int_index(index, "put_", "int64")
    if index._data.size != source._data.size:
        raise IndexError(f"put_(): Expected source and index to have the same number of elements, but got "
                         f"source.numel() = {source._data.size}, index.numel() = {index._data.size}")
    arr = _flat_indices(index, self._data.size, self._device)
    work = self.contiguous().reshape(-1)
    plan = IndexPlan(work, [0], [arr])
    _advanced_write(plan, source.reshape(-1).to(self._dtype), accumulate, alert="put_")
    if work._storage is not self._storage:
        self.copy_(work.reshape(self.shape))
    self._bump_version()
    return self


@op()
def put(input, index, source, accumulate=False):
    """Out-of-place `put_`."""
    return put_(input.clone(), index, source, accumulate)


# --- masks ------------------------------------------------------------------------------

def _check_mask(mask, name):
    if not isinstance(mask, Tensor) or mask._dtype is not D.bool:
        kind = _iter.type_name(mask._dtype) if isinstance(mask, Tensor) else type(mask).__name__
        if name == "masked_select":
            raise RuntimeError("masked_select: expected BoolTensor for mask")
        raise RuntimeError(f"{name} only supports boolean masks, but got mask with dtype "
                           f"{_LONG_NAMES.get(kind, kind)}")


_LONG_NAMES = {"Long": "long int", "Int": "int", "Byte": "unsigned char", "Float": "float",
               "Double": "double", "Short": "short int", "Char": "signed char", "Half": "c10::Half"}


def _fill_value(value, name):
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(f"{name} only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value._data.ndim} dimension(s).")
    return value


@op("masked_fill_", inplace=True)
def masked_fill_(self, mask, value):
    """Set self's elements where `mask` (bool, broadcast to self) is True to `value`."""
    _check_mask(mask, "masked_fill_")
    value = _fill_value(value, "masked_fill_")
    from .elementwise import where
    fill = value.to(self._dtype) if isinstance(value, Tensor) else value
    self.copy_(where(mask, fill, self).to(self._dtype))
    return self


@op()
def masked_fill(input, mask, value):
    """`input` with the elements where `mask` is True replaced by `value`.

    >>> masked_fill(tensor([1., 2., 3.]), tensor([True, False, True]), 0.)
    tensor([0., 2., 0.])
    """
    _check_mask(mask, "masked_fill_")
    value = _fill_value(value, "masked_fill_")
    shape = _iter.broadcast_shapes(tuple(input.shape), tuple(mask.shape))
    return masked_fill_(input.expand(shape).clone(), mask, value)


@op("masked_scatter_", inplace=True)
def masked_scatter_(self, mask, source):
    """Copy `source`'s elements, in order, into self where `mask` is True."""
    _check_mask(mask, "masked_scatter_")
    if source._dtype is not self._dtype:
        raise RuntimeError("masked_scatter_: expected self and source to have same dtypes but got "
                           f"{_iter.type_name(self._dtype)} and {_iter.type_name(source._dtype)}")
    flags = mask.expand(self.shape)
    found, count = _backends.get(flags._device).indexing.nonzero_positions(flags._data)
    positions = Tensor._wrap(found, D.int64, flags._device)
    if count > source._data.size:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    if count:
        put_(self, positions, source.reshape(-1)[:count])
    return self


@op()
def masked_scatter(input, mask, source):
    """Out-of-place `masked_scatter_`.

    >>> masked_scatter(zeros(3), tensor([True, False, True]), tensor([1., 2.]))
    tensor([1., 0., 2.])
    """
    shape = _iter.broadcast_shapes(tuple(input.shape), tuple(mask.shape))
    return masked_scatter_(input.expand(shape).clone(), mask, source)


@op()
def masked_select(input, mask, *, out=None):
    """The elements of `input` where `mask` is True (broadcast together), as a 1-d tensor.

    >>> masked_select(tensor([[1, 2], [3, 4]]), tensor([True, False]))
    tensor([1, 3])
    """
    _check_mask(mask, "masked_select")
    shape = _iter.broadcast_shapes(tuple(input.shape), tuple(mask.shape))
    result = _indexing.getitem(input.expand(shape), mask.expand(shape)) if shape else input.reshape(1)[mask.reshape(1)]
    return _maybe_out(result, out)


# --- nonzero ----------------------------------------------------------------------------

@op()
def nonzero(input, *, out=None, as_tuple=False):
    """Indices of the nonzero elements: an (n, ndim) int64 tensor, or a tuple of one
    1-d tensor per dim with `as_tuple` (a 0-d input counts as 1-d).

    >>> nonzero(tensor([[0, 1], [2, 0]]))
    tensor([[0, 1],
            [1, 0]])
    """
    found = _backends.get(input._device).indexing.nonzero(input._data, as_tuple)
    if as_tuple:
        return tuple(Tensor._wrap(f, D.int64, input._device) for f in found)
    return _maybe_out(Tensor._wrap(found, D.int64, input._device), out)


@op()
def argwhere(input):
    """Same as ``nonzero(input)``.

    >>> argwhere(tensor([0, 3, 0, 4]))
    tensor([[1],
            [3]])
    """
    return nonzero(input)
