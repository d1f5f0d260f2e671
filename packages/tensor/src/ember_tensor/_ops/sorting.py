"""Sorting and selection: sort, argsort, msort, topk, kthvalue, nanmedian, mode (and, from
`counting`, unique, unique_consecutive, searchsorted, bucketize, histc, bincount).

Device-free: each op checks its arguments with PyTorch's errors, wraps `dim`, then calls
its device's backend (`_backends.<device>.sorting`: NumPy's stable sort on the CPU, a
bitonic sort of order codes on CUDA) and wraps the arrays it returns. median itself
lives with the reductions.
"""
import numpy as np

from .. import _backends
from .. import _dtype as D
from .._dispatch import op
from .._runtime.determinism import alert_if_atomic
from .._tensor import Tensor, wrap_dim
from .creation import full, zeros
from .reduction import _pair, _reject_complex, return_types
from .counting import bincount, bucketize, histc, searchsorted, unique, unique_consecutive  # noqa: F401

__all__ = ["sort", "argsort", "msort", "topk", "kthvalue", "nanmedian", "mode", "unique",
           "unique_consecutive", "searchsorted", "bucketize", "histc", "bincount"]


def _sorting(t):
    """The sorting family of `t`'s backend."""
    return _backends.get(t._device).sorting


def _line_dim(input, dim):
    return wrap_dim(dim, max(input._data.ndim, 1))


def _wrap_pair(input, values, indices):
    return Tensor._wrap(values, input._dtype, input._device), Tensor._wrap(indices, D.int64, input._device)


@op()
def sort(input, dim=-1, descending=False, stable=False, *, out=None):
    """(values, indices) of `input` sorted along `dim` (always stable: equal values keep
    their order, NaN counts as largest).

    >>> sort(tensor([3, 1, 2])).indices
    tensor([1, 2, 0])
    """
    if input._dtype.category == D._COMPLEX:
        raise RuntimeError(" Sort does not support complex dtypes on CPU")
    values, indices = _sorting(input).sort(input._data, _line_dim(input, dim), descending)
    return _pair(return_types.sort, *_wrap_pair(input, values, indices), out)


@op()
def argsort(input, dim=-1, descending=False, stable=False):
    """Indices that sort `input` along `dim` (see `sort`).

    >>> argsort(tensor([3, 1, 2]), descending=True)
    tensor([0, 2, 1])
    """
    indices = _sorting(input).argsort(input._data, _line_dim(input, dim), descending)
    return Tensor._wrap(indices, D.int64, input._device)


def msort(input):
    """`input` sorted along its first dim.

    >>> msort(tensor([[2, 1], [1, 3]]))
    tensor([[1, 1],
            [2, 3]])
    """
    return sort(input, 0).values


@op()
def topk(input, k, dim=-1, largest=True, sorted=True, *, out=None):  # noqa: A002 - PyTorch's name
    """The `k` largest (or smallest) values along `dim` and their indices, in order.

    >>> topk(tensor([1., 4., 2., 3.]), 2)
    torch.return_types.topk(
    values=tensor([4., 3.]),
    indices=tensor([1, 3]))
    """
    if input._dtype.category == D._COMPLEX:
        raise RuntimeError(" topk does not support complex dtypes on CPU")
    ndim = input._data.ndim
    size = input._data.shape[wrap_dim(dim, max(ndim, 1))] if ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    if not ndim:
        # A 0-d tensor holds one value whatever k (0 or 1) asks for: PyTorch returns it.
        return _pair(return_types.topk, input.clone(), zeros((), dtype=D.int64, device=input._device), out)
    values, indices = _sorting(input).topk(input._data, k, wrap_dim(dim, max(ndim, 1)), largest)
    return _pair(return_types.topk, *_wrap_pair(input, values, indices), out)


def _check_nonempty_dim(input, dim, name):
    if input._data.ndim and not input._data.shape[dim]:
        raise IndexError(f"{name}(): Expected reduction dim {dim} to have non-zero size.")


def _select_position(input, dim, keepdim, cls, out, how, k=0):
    """(values, indices) at the sorted position the backend's `select` finds for `how`
    ("kth": the (k+1)-th smallest; "nanmedian": the lower median ignoring NaN)."""
    dim = _line_dim(input, dim)
    values, chosen = _wrap_pair(input, *_sorting(input).select(input._data, dim, how, k))
    if not keepdim and input._data.ndim:
        values, chosen = values.squeeze(dim), chosen.squeeze(dim)
    return _pair(cls, values, chosen, out)


@op()
def kthvalue(input, k, dim=-1, keepdim=False, *, out=None):
    """The k-th smallest value along `dim` (k counts from 1) and its index.

    >>> kthvalue(tensor([3., 1., 2.]), 2).values
    tensor(2.)
    """
    _reject_complex(input, "kthvalue_cpu")
    ndim = input._data.ndim
    d = wrap_dim(dim, max(ndim, 1))
    size = input._data.shape[d] if ndim else 1
    _check_nonempty_dim(input, d, "kthvalue")
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    return _select_position(input, dim, keepdim, return_types.kthvalue, out, "kth", k - 1)


@op()
def nanmedian(input, dim=None, keepdim=False, *, out=None):
    """The lower median ignoring NaN (NaN only when a line is all NaN), over all
    elements or along `dim` with indices.

    >>> nanmedian(tensor([1., float('nan'), 3., 2.]))
    tensor(2.)
    """
    _reject_complex(input, "median_cpu" if dim is None else "median_out")  # (PyTorch's kernel names)
    if dim is None:
        flat = input.reshape(-1)
        if not flat._data.size:
            # median()'s empty result: NaN, or the smallest integer for an integer dtype
            fill = float("nan") if input._dtype.category == D._FLOAT else np.iinfo(input._dtype.np).min
            return full((), fill, dtype=input._dtype, device=input._device)
        return _select_position(flat, 0, False, return_types.nanmedian, None, "nanmedian").values
    # PyTorch's CUDA nanmedian along a dim is its median's kernel, with the same alert.
    alert_if_atomic(input, "median CUDA with indices output")
    if input._data.ndim and not input._data.shape[wrap_dim(dim, input._data.ndim)]:
        raise IndexError(f"median(): Expected reduction dim {dim} to have non-zero size.")  # sic, PyTorch's
    return _select_position(input, dim, keepdim, return_types.nanmedian, out, "nanmedian")


@op()
def mode(input, dim=-1, keepdim=False, *, out=None):
    """The most frequent value along `dim` (the smallest among ties) and the index of its
    last occurrence.

    >>> mode(tensor([1, 2, 2, 3, 3, 1]))
    torch.return_types.mode(
    values=tensor(1),
    indices=tensor(5))
    """
    _reject_complex(input, "mode_cpu")
    dim = _line_dim(input, dim)
    _check_nonempty_dim(input, dim, "mode")
    values, chosen = _wrap_pair(input, *_sorting(input).mode(input._data, dim))
    if not keepdim and input._data.ndim:
        values, chosen = values.squeeze(dim), chosen.squeeze(dim)
    return _pair(return_types.mode, values, chosen, out)
