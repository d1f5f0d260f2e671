"""Index ops along a dim: index_select/add/copy/fill, gather, scatter (and its
reductions), take_along_dim, with in-place forms where PyTorch has them; the flat and mask
ops (take, put, masked_*, nonzero, argwhere) live in `masked` and are re-exported here.

The index_* ops reuse the advanced-indexing plan of `_index_plan` with a single index
array (the device's `indexing` backend family); gather and scatter are the device's
`scatter` family (odometer kernels on the CPU; on CUDA indices never leave the device
and a bounds check reads back one value). Every op here checks its arguments with
PyTorch's errors first and never branches on the device.
"""
import numpy as np

from .. import _dtype as D
from .._dispatch import op
from .._tensor import Tensor, wrap_dim
from .. import _backends
from . import _iter, views
from ._index_plan import IndexPlan
from .indexing import _advanced_read, _advanced_write, index_put, index_put_  # noqa: F401 - methods
from .masked import (  # noqa: F401 - the flat and mask ops are index ops (and methods) too
    _check_int_index, _maybe_out, argwhere, masked_fill, masked_fill_, masked_scatter, masked_scatter_,
    masked_select, nonzero, put, put_, take,
)

__all__ = ["index_select", "index_add", "index_add_", "index_copy", "index_copy_", "index_fill",
           "index_fill_", "gather", "scatter", "scatter_", "scatter_add", "scatter_add_",
           "scatter_reduce", "scatter_reduce_", "take", "take_along_dim", "put", "put_",
           "masked_fill", "masked_fill_", "masked_scatter", "masked_scatter_", "masked_select",
           "nonzero", "argwhere", "index_put", "index_put_", "index_reduce", "index_reduce_", "fill_diagonal_"]


def _dim_plan(self, dim, index, name):
    """An IndexPlan selecting `index` (a vector) along `dim` of `self` (0-d acts as 1-d)."""
    if index._data.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector")
    _iter.common_device((self, index))
    view = self if self._data.ndim else self.reshape(1)
    dim = wrap_dim(dim, max(self._data.ndim, 1))
    arr = _backends.get(view._device).indexing.index_vector(index._data)
    return IndexPlan(view, [dim], [arr]), dim


def _first_out_of_range(plan, lo, hi):
    return _backends.get(plan.view._device).indexing.first_out_of_range(plan.arrays[0], lo, hi)


def _checked_plan(self, dim, index, name, prefix="", negative_ok=False, error=IndexError):
    plan, dim = _dim_plan(self, dim, index, name)
    size = plan.view._data.shape[dim]
    bad = _first_out_of_range(plan, -size if negative_ok else 0, size)
    if bad is not None:
        raise error(f"{prefix}index {bad} is out of bounds for dimension {dim} with size {size}")
    return plan, dim


@op()
def index_select(input, dim, index, *, out=None):
    """The slices of `input` at positions `index` (a vector) along `dim`.

    >>> index_select(tensor([[1, 2], [3, 4]]), 1, tensor([1, 1]))
    tensor([[2, 2],
            [4, 4]])
    """
    if not isinstance(index, Tensor) or index._dtype not in (D.int64, D.int32):
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    if not input._data.ndim and index._data.size != 1:
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got {index._data.size} value(s)")
    plan, dim = _dim_plan(input, dim, index, "index_select")
    size = plan.view._data.shape[dim]
    if size == 0 and index._data.size:
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    bad = _first_out_of_range(plan, 0, size)
    if bad is not None:
        raise RuntimeError(f"INDICES element is out of DATA bounds, id={bad} axis_dim={size}")
    result = _advanced_read(plan)
    if not input._data.ndim:
        result = result.reshape(())
    if out is not None:
        from .elementwise import copy_to_out
        return copy_to_out(result, out)
    return result


def _check_source(self, dim, index, source, name):
    n = index._data.size
    src_dim = source.size(dim) if source._data.ndim else 1
    if n != src_dim:
        raise RuntimeError(f"{name}(): Number of indices ({n}) should be equal to source.size(dim): "
                           f"({src_dim}), for dim: {dim}")


@op("index_add_", inplace=True)
def index_add_(self, dim, index, source, *, alpha=1):
    """self[..., index[i], ...] += alpha * source[..., i, ...] along `dim` (repeats add up)."""
    _check_int_index(index, "index_add_", "int32 or int64")
    plan, dim = _checked_plan(self, dim, index, "index_add_", error=RuntimeError)
    _check_source(self, dim, index, source, "index_add_")
    values = source if alpha == 1 else source * alpha
    _advanced_write(plan, values.to(self._dtype), accumulate=True)
    self._bump_version()
    return self


@op()
def index_add(input, dim, index, source, *, alpha=1, out=None):
    """Out-of-place `index_add_`.

    >>> index_add(zeros(3), 0, tensor([0, 0]), tensor([1., 2.]))
    tensor([3., 0., 0.])
    """
    return _maybe_out(index_add_(input.clone(), dim, index, source, alpha=alpha), out)


@op("index_copy_", inplace=True)
def index_copy_(self, dim, index, source):
    """self[..., index[i], ...] = source[..., i, ...] along `dim`."""
    _check_int_index(index, "index_copy_", "int64")
    plan, dim = _checked_plan(self, dim, index, "index_copy_", prefix="index_copy_(): ")
    _check_source(self, dim, index, source, "index_copy_")
    _advanced_write(plan, source.to(self._dtype), accumulate=False)
    self._bump_version()
    return self


@op()
def index_copy(input, dim, index, source, *, out=None):
    """Out-of-place `index_copy_`.

    >>> index_copy(zeros(3), 0, tensor([2]), tensor([5.]))
    tensor([0., 0., 5.])
    """
    return _maybe_out(index_copy_(input.clone(), dim, index, source), out)


@op("index_fill_", inplace=True)
def index_fill_(self, dim, index, value):
    """Fill the slices at positions `index` along `dim` with `value`."""
    _check_int_index(index, "index_fill_", "int64")
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError("index_fill_ only supports a 0-dimensional value tensor, but got tensor "
                               f"with {value._data.ndim} dimension(s).")
        if value._device != self._device:  # a value on self's device is broadcast there
            value = value.item()
    plan, dim = _checked_plan(self, dim, index, "index_fill_", negative_ok=True)
    _advanced_write(plan, value, accumulate=False)
    self._bump_version()
    return self


def fill_diagonal_(self, fill_value, wrap=False):
    """Fill the main diagonal of `self` (2 or more dims, all equal beyond 2) with
    `fill_value`; with `wrap`, a matrix taller than wide starts the diagonal again every
    width + 1 rows, as NumPy's fill_diagonal. In place, through diagonal views, so
    autograd sees fills of views of `self`.

    >>> zeros(2, 2).fill_diagonal_(3.)
    tensor([[3., 0.],
            [0., 3.]])
    """
    if self.dim() < 2:
        raise RuntimeError("dimensions must larger than 1")
    if self.dim() > 2:
        if len(set(self.shape)) != 1:
            raise RuntimeError("all dimensions of input must be of equal length")
        size = self.shape[0]
        self.as_strided((size,), (sum(self.stride()),), self.storage_offset()).fill_(fill_value)
        return self
    height, width = self.shape
    starts = range(0, height, width + 1) if wrap and height > width + 1 else (0,)
    for start in starts:
        views.narrow(self, 0, start, min(height - start, width) if wrap else height).diagonal().fill_(fill_value)
    return self


@op()
def index_fill(input, dim, index, value):
    """Out-of-place `index_fill_`.

    >>> index_fill(zeros(3), 0, tensor([1]), 7.)
    tensor([0., 7., 0.])
    """
    return index_fill_(input.clone(), dim, index, value)


# --- gather / scatter -------------------------------------------------------------------

def _gather_checks(name, self, dim, index, src=None):
    """Wrapped `dim` after PyTorch's checks (none but the dtype for an empty index)."""
    _check_int_index(index, name)
    _iter.common_device((self, index, src))  # PyTorch's error for tensors on two devices
    ndim = max(self._data.ndim, 1)
    if not index._data.size:
        return wrap_dim(dim, max(ndim, index._data.ndim, 1))
    dim = wrap_dim(dim, ndim)
    if max(index._data.ndim, 1) != ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    ishape = index._data.shape if index._data.ndim else (1,)
    sshape = self._data.shape if self._data.ndim else (1,)
    src_is_tensor = isinstance(src, Tensor)
    srcshape = (src._data.shape if src._data.ndim else (1,)) if src_is_tensor else None
    for d in range(ndim):
        too_big_for_self = d != dim and ishape[d] > sshape[d]
        too_big_for_src = src_is_tensor and ishape[d] > srcshape[d]
        if not (too_big_for_self or too_big_for_src):
            continue
        if src is None:
            raise RuntimeError(
                f"Size does not match at dimension {d} expected index {list(index.shape)} to be no "
                f"larger than self {list(self.shape)} apart from dimension {dim}")
        if not src_is_tensor:
            raise RuntimeError(f"Expected index {list(index.shape)} to be no larger than self "
                               f"{list(self.shape)} apart from dimension {dim}")
        raise RuntimeError(
            f"Expected index {list(index.shape)} to be no larger than self {list(self.shape)} apart from "
            f"dimension {dim} and to be no larger size than src {list(src.shape)}")
    return dim


def _raise_bad_index(value, dim, size, error=RuntimeError):
    raise error(f"index {int(value)} is out of bounds for dimension {dim} with size {size}")


@op()
def gather(input, dim, index, *, sparse_grad=False, out=None):
    """out[i][j] = input[index[i][j]][j] (dim 0), input[i][index[i][j]] (dim 1), ...

    >>> gather(tensor([[1, 2], [3, 4]]), 1, tensor([[0, 0], [1, 0]]))
    tensor([[1, 1],
            [4, 3]])
    """
    dim = _gather_checks("gather", input, dim, index)
    if not index._data.size:
        empty = _backends.get(input._device).storage.empty(tuple(index._data.shape), input._dtype.np)
        return _maybe_out(Tensor._wrap(empty, input._dtype, input._device), out)
    values, bad = _backends.get(input._device).scatter.gather(input._data, dim, index._data)
    if bad is not None:
        _raise_bad_index(bad, dim, (input._data.shape or (1,))[dim])
    return _maybe_out(Tensor._wrap(values, input._dtype, input._device), out)


def _scatter_into(self, dim, index, src, mode, name, include_self=True):
    """Scatter `src` (a tensor or a number) into self at `index` along `dim`, in place."""
    dim = _gather_checks(name, self, dim, index, src)
    if not index._data.size:
        return self
    work_dtype = np.dtype(_iter.compute_dtype(self._dtype).np)
    identity = None if include_self else _identity(mode, work_dtype)
    values = src._data if isinstance(src, Tensor) else src
    bad = _backends.get(self._device).scatter.scatter(self._data, dim, index._data, values, mode, include_self,
                                                      identity, work_dtype)
    if bad is not None:
        _raise_bad_index(bad, dim, (self._data.shape or (1,))[dim])
    self._bump_version()
    return self


def _identity(reduce_name, np_dtype):
    if reduce_name in ("sum", "mean"):
        return 0
    if reduce_name == "prod":
        return 1
    info = np.finfo(np_dtype) if np_dtype.kind == "f" else np.iinfo(np_dtype)
    if np_dtype.kind == "f":
        return -np.inf if reduce_name == "amax" else np.inf
    return info.min if reduce_name == "amax" else info.max


def _scatter_src(src, value, self):
    if src is None and value is None:
        raise TypeError("scatter() missing required argument 'src' or 'value'")
    if src is None or not isinstance(src, Tensor):
        v = value if src is None else src
        return v.item() if isinstance(v, Tensor) else v
    if src._dtype is not self._dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    return src


@op("scatter_", inplace=True)
def scatter_(self, dim, index, src=None, *, value=None, reduce=None):
    """Write `src` (a tensor or a number) into self at `index` along `dim`.

    With reduce='add' or 'multiply', combine with the existing values instead.
    """
    source = _scatter_src(src, value, self)
    if reduce is not None and reduce not in ("add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")
    return _scatter_into(self, dim, index, source, reduce or "copy", "scatter")


@op()
def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    """Out-of-place `scatter_`.

    >>> scatter(zeros(2, 3), 1, tensor([[2], [0]]), 1.)
    tensor([[0., 0., 1.],
            [1., 0., 0.]])
    """
    return scatter_(input.clone(), dim, index, src, value=value, reduce=reduce)


@op("scatter_add_", inplace=True)
def scatter_add_(self, dim, index, src):
    """self[index[i][j]][j] += src[i][j] (dim 0), and so on; repeated indices add up."""
    return _scatter_into(self, dim, index, _scatter_src(src, None, self), "add", "scatter_add")


@op()
def scatter_add(input, dim, index, src):
    """Out-of-place `scatter_add_`.

    >>> scatter_add(zeros(3), 0, tensor([0, 0, 2]), tensor([1., 2., 3.]))
    tensor([3., 0., 3.])
    """
    return scatter_add_(input.clone(), dim, index, src)


_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


@op("scatter_reduce_", inplace=True)
def scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
    """Reduce the values of `src` scattered to each element of self (sum, prod, mean,
    amax, amin), counting self's own value unless `include_self` is False."""
    if reduce not in _REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    return _scatter_into(self, dim, index, _scatter_src(src, None, self), reduce, "scatter_reduce",
                         include_self=include_self)


@op()
def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """Out-of-place `scatter_reduce_`.

    >>> scatter_reduce(zeros(2), 0, tensor([0, 0, 1]), tensor([1., 3., 2.]), "amax", include_self=False)
    tensor([3., 2.])
    """
    return scatter_reduce_(input.clone(), dim, index, src, reduce, include_self=include_self)


_INDEX_REDUCTIONS = ("prod", "mean", "amax", "amin")


@op("index_reduce_", inplace=True)
def index_reduce_(self, dim, index, source, reduce, *, include_self=True):
    """Reduce source[..., i, ...] into self[..., index[i], ...] along `dim` with `reduce`
    (prod, mean, amax or amin), counting self's own value unless `include_self` is False:
    ``scatter_reduce_`` with `index` spread along `dim`."""
    if reduce not in _INDEX_REDUCTIONS:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    _check_int_index(index, "index_reduce_")
    if index.dim() > 1:
        raise IndexError(f"index_reduce_(): Index is supposed to be a vector, but got dim: {index.dim()} "
                         f"with type: {_iter.type_name(index._dtype)} and size: {list(index.shape)}")
    dim = wrap_dim(dim, max(self.dim(), 1))
    _check_source(self, dim, index, source, "index_reduce_")
    if self._dtype is not source._dtype:
        raise RuntimeError(f"index_reduce_(): self ({_iter.type_name(self._dtype)}) and source "
                           f"({_iter.type_name(source._dtype)}) must have the same scalar type")
    if self.dim() != source.dim() or any(a != b for d, (a, b) in enumerate(zip(self.shape, source.shape)) if d != dim):
        raise RuntimeError("source tensor shape must match self tensor shape, excluding the specified dimension. "
                           f"Got self.shape = {list(self.shape)} source.shape = {list(source.shape)}")
    plan, _ = _dim_plan(self, dim, index, "index_reduce_")
    if _first_out_of_range(plan, 0, self.shape[dim]) is not None:
        raise IndexError("index out of range in self")
    spread = [1] * source.dim()
    spread[dim] = index.numel()
    positions = index.to(D.int64).reshape(spread).expand(tuple(source.shape))
    return scatter_reduce_(self, dim, positions, source, reduce, include_self=include_self)


@op()
def index_reduce(input, dim, index, source, reduce, *, include_self=True, out=None):
    """Out-of-place `index_reduce_`.

    >>> index_reduce(ones(3), 0, tensor([0, 0, 2]), tensor([2., 3., 4.]), "prod")
    tensor([6., 1., 4.])
    """
    return _maybe_out(index_reduce_(input.clone(), dim, index, source, reduce, include_self=include_self), out)


@op()
def take_along_dim(input, indices, dim=None, *, out=None):
    """Values of `input` at `indices` along `dim` (broadcast against each other), or of the
    flattened input when `dim` is None.

    >>> take_along_dim(tensor([[10, 30, 20]]), tensor([[1]]), dim=1)
    tensor([[30]])
    """
    if dim is None:
        return _maybe_out(take(input.reshape(-1), indices.reshape(-1)), out)
    ndim = input._data.ndim
    dim = wrap_dim(dim, max(ndim, 1))
    if indices._data.ndim != ndim:
        raise RuntimeError("torch.take_along_dim(): input and indices should have the same number of "
                           f"dimensions, but got {ndim} dimensions for input, and {indices._data.ndim} "
                           "dimensions for indices")
    in_shape, idx_shape = list(input.shape), list(indices.shape)
    in_shape[dim] = idx_shape[dim] = 1
    common = _iter.broadcast_shapes(tuple(in_shape), tuple(idx_shape))
    in_target, idx_target = list(common), list(common)
    if ndim:
        in_target[dim], idx_target[dim] = input.shape[dim], indices.shape[dim]
    return _maybe_out(gather(input.expand(in_target), dim, indices.expand(idx_target)), out)
