"""Searching and counting: unique, unique_consecutive, searchsorted, bucketize, histc,
bincount.

Device-free: each op checks its arguments with PyTorch's errors and plans its result,
then calls its device's backend (`_backends.<device>.counting`: NumPy and Numba counting
loops on the CPU, device kernels on CUDA). The ops whose output size or range depends
on the data read that number back (`smallest`, `index_range`, `data_range`, unique's
group count), as PyTorch's CUDA kernels do.
"""
import numpy as np

from .. import _backends
from .. import _dtype as D
from .._dispatch import op
from .._tensor import Tensor, wrap_dim
from . import _iter
from .elementwise import copy_to_out

__all__ = ["unique", "unique_consecutive", "searchsorted", "bucketize", "histc", "bincount"]


def _counting(t):
    """The counting family of `t`'s backend."""
    return _backends.get(t._device).counting


def _unique_results(input, values, inverse, counts, return_inverse, return_counts):
    device = input._device
    result = [Tensor._wrap(values, input._dtype, device)]
    if return_inverse:
        result.append(Tensor._wrap(inverse, D.int64, device))
    if return_counts:
        result.append(Tensor._wrap(counts, D.int64, device))
    return result[0] if len(result) == 1 else tuple(result)


def _unique_of_nothing(input, dim, return_inverse, return_counts):
    """unique / unique_consecutive of an empty tensor along `dim`: PyTorch's error unless
    `dim` is the empty one, which gives empty results."""
    shape = input._data.shape
    dim = wrap_dim(dim, max(len(shape), 1))
    if shape and shape[dim] != 0:
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique cannot be applied")
    storage = _backends.get(input._device).storage
    empty = storage.empty((0,), np.int64)
    return _unique_results(input, storage.empty(shape, input._dtype.np), empty, empty, return_inverse,
                           return_counts)


def _unique(input, return_inverse, return_counts, dim, consecutive):
    if dim is not None and input._data.size == 0:
        return _unique_of_nothing(input, dim, return_inverse, return_counts)
    dim = None if dim is None else wrap_dim(dim, max(input._data.ndim, 1))
    values, inverse, counts = _counting(input).unique(input._data, dim, consecutive)
    return _unique_results(input, values, inverse, counts, return_inverse, return_counts)


@op()
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    """The distinct values of `input` (or distinct slices along `dim`), sorted, with the
    inverse mapping and counts on request.

    >>> unique(tensor([3, 1, 2, 1]), return_counts=True)
    (tensor([1, 2, 3]), tensor([2, 1, 1]))
    """
    return _unique(input, return_inverse, return_counts, dim, consecutive=False)


@op()
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Collapse runs of equal consecutive values (or slices along `dim`) to one.

    >>> unique_consecutive(tensor([1, 1, 2, 2, 3, 1]))
    tensor([1, 2, 3, 1])
    """
    return _unique(input, return_inverse, return_counts, dim, consecutive=True)


@op()
def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None, out=None):
    """Where each value of `input` would go in `sorted_sequence` (1-d, or a batch of rows
    matching `input`'s leading dims) to keep it sorted.

    >>> searchsorted(tensor([1, 3, 5, 7]), tensor([3, 6, 9]))
    tensor([1, 3, 4])
    """
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
        right = side == "right"
    _iter.common_device([sorted_sequence, input, sorter])
    if sorted_sequence._data.ndim == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 "
                           "dimension")
    if sorter is not None and sorter._data.shape != sorted_sequence._data.shape:
        raise RuntimeError("torch.searchsorted(): boundary and sorter must have the same size, but got boundary "
                           f"tensor {list(sorted_sequence.shape)}and got sorter tensor {list(sorter.shape)}")  # sic
    if sorter is not None:
        _check_sorter(sorter, sorted_sequence._data.shape[-1])
    scalar = not isinstance(input, Tensor)
    values_shape = () if scalar else tuple(input._data.shape)
    seq = sorted_sequence._data
    if seq.ndim > 1 and (scalar or tuple(seq.shape[:-1]) != values_shape[:-1]):
        raise _batch_mismatch(seq.shape, values_shape)
    values = np.asarray(input) if scalar else input._data  # one number: the backend takes it as is
    found = _counting(sorted_sequence).searchsorted(seq, values, right, None if sorter is None else sorter._data,
                                                     out_int32)
    dtype = D.int32 if out_int32 else D.int64
    return _into(Tensor._wrap(found, dtype, sorted_sequence._device), out)


def _check_sorter(sorter, length):
    """PyTorch's errors for a sorter that is not int64 or points outside the sequence."""
    if sorter._dtype is not D.int64:
        raise RuntimeError("torch.searchsorted(): sorter must be a tensor of long dtype but got dtype "
                           f"{_iter.type_name(sorter._dtype)}")
    if not sorter._data.size:
        return
    lo, hi = _counting(sorter).index_range(sorter._data)  # read back: the search must not read outside
    if lo < 0 or hi >= length:
        raise RuntimeError("torch.searchsorted(): sorter index out of range")


def _batch_mismatch(seq_shape, values_shape):
    return RuntimeError(
        "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions "
        "of boundaries tensor and input value tensor must match, but we got boundaries tensor "
        f"{list(seq_shape)} and input value tensor {list(values_shape)}")


def _into(result, out):
    return result if out is None else copy_to_out(result, out)


@op()
def bucketize(input, boundaries, *, out_int32=False, right=False, out=None):
    """The bucket of each value: i with boundaries[i-1] < x <= boundaries[i] (with `right`:
    boundaries[i-1] <= x < boundaries[i]).

    >>> bucketize(tensor([3, 6, 9]), tensor([1, 3, 5, 7]))
    tensor([1, 3, 4])
    """
    if boundaries._data.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries._data.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right, out=out)


@op()
def histc(input, bins=100, min=0, max=0, *, out=None):  # noqa: A002 - PyTorch's names
    """Histogram of `input` in `bins` equal bins over [min, max] (the data's range when
    min == max); values outside are ignored.

    >>> histc(tensor([1., 2., 1.]), bins=4, min=0, max=3)
    tensor([0., 2., 1., 0.])
    """
    if input._dtype.category != D._FLOAT:
        raise NotImplementedError(f"\"histogram_{input._device.type}\" not implemented for '{_iter.type_name(input._dtype)}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    lo, hi = float(min), float(max)
    if lo == hi and input._data.size:
        lo, hi = _counting(input).data_range(input._data)  # read back, as PyTorch's CUDA histc does
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (np.isfinite(lo) and np.isfinite(hi)):  # NaN or inf bounds would index out of range
        raise RuntimeError(f"torch.histc: range of [{lo:g}, {hi:g}] is not finite")
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    return _into(Tensor._wrap(_counting(input).histc(input._data, bins, lo, hi), input._dtype, input._device), out)


@op()
def bincount(input, weights=None, minlength=0):
    """Count of each value 0..max(input) of a 1-d non-negative integer tensor (or the sum of
    `weights` at them); at least `minlength` bins.

    >>> bincount(tensor([0, 1, 1, 3]))
    tensor([1, 2, 0, 1])
    """
    if input._dtype.category != D._INT or input._dtype is D.bool or input._data.ndim != 1:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    _iter.common_device([input, weights])
    # read back, as PyTorch's CUDA bincount does
    if input._data.size and _counting(input).smallest(input._data) < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is not None and weights._data.shape != input._data.shape:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    if weights is None:
        dtype = D.int64
    else:
        dtype = weights._dtype if weights._dtype in (D.float32, D.float64) else D.float64
    counts = _counting(input).bincount(input._data, None if weights is None else weights._data, minlength,
                                       dtype.np)
    return Tensor._wrap(counts, dtype, input._device)
