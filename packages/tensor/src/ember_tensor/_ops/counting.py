"""Searching and counting: unique, unique_consecutive, searchsorted, bucketize, histc,
bincount.

On the CPU these run NumPy (unique, searchsorted) and Numba counting loops
(`_kernels/cpu_index`: histc, bincount). CUDA tensors compute on the device
(`_backends.cuda.counting`) after the same argument checks; the ops whose output size depends on
the data read that one number back, as PyTorch's CUDA kernels do.
"""
import numpy as np

from .. import _dtype as D
from .._dispatch import op
from .._tensor import Tensor, wrap_dim
from .._backends.lazy import lazy, lazy_module

K = lazy("cpu.kernels.index")  # Numba loads on first use
CC = lazy_module("ember_tensor._backends.cuda.counting")  # CUDA tensors: device kernels, loaded on first use
from . import _iter  # noqa: E402
from ._strided import host, wrap  # noqa: E402

__all__ = ["unique", "unique_consecutive", "searchsorted", "bucketize", "histc", "bincount"]


def _unique_results(input, values, inverse, counts, return_inverse, return_counts, inverse_shape):
    result = [wrap(values, input._dtype, input._device)]
    if return_inverse:
        result.append(wrap(inverse.reshape(inverse_shape).astype(np.int64), D.int64, input._device))
    if return_counts:
        result.append(wrap(counts.astype(np.int64), D.int64, input._device))
    return result[0] if len(result) == 1 else tuple(result)


def _unique_of_nothing(input, dim, return_inverse, return_counts):
    """unique / unique_consecutive of an empty tensor along `dim`: PyTorch's error unless
    `dim` is the empty one, which gives empty results."""
    shape = input._data.shape
    dim = wrap_dim(dim, max(len(shape), 1))
    if shape and shape[dim] != 0:
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique cannot be applied")
    empty = np.empty(0, np.int64)
    return _unique_results(input, np.empty(shape, input._dtype.np), empty, empty, return_inverse, return_counts,
                           (-1,))


@op()
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    """The distinct values of `input` (or distinct slices along `dim`), sorted, with the
    inverse mapping and counts on request.

    >>> unique(tensor([3, 1, 2, 1]), return_counts=True)
    (tensor([1, 2, 3]), tensor([2, 1, 1]))
    """
    if dim is not None and input._data.size == 0:
        return _unique_of_nothing(input, dim, return_inverse, return_counts)
    if input._device.type == "cuda":
        dim = None if dim is None else wrap_dim(dim, max(input._data.ndim, 1))
        return CC.unique(input, return_inverse, return_counts, dim, consecutive=False)
    arr = host(input)
    if dim is None:
        values, inverse, counts = np.unique(arr.reshape(-1), return_inverse=True, return_counts=True)
        return _unique_results(input, values, inverse, counts, return_inverse, return_counts, arr.shape)
    dim = wrap_dim(dim, max(arr.ndim, 1))
    values, inverse, counts = np.unique(arr, return_inverse=True, return_counts=True, axis=dim)
    return _unique_results(input, values, inverse, counts, return_inverse, return_counts, (-1,))


@op()
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Collapse runs of equal consecutive values (or slices along `dim`) to one.

    >>> unique_consecutive(tensor([1, 1, 2, 2, 3, 1]))
    tensor([1, 2, 3, 1])
    """
    if dim is not None and input._data.size == 0:
        return _unique_of_nothing(input, dim, return_inverse, return_counts)
    if input._device.type == "cuda":
        dim = None if dim is None else wrap_dim(dim, max(input._data.ndim, 1))
        return CC.unique(input, return_inverse, return_counts, dim, consecutive=True)
    arr = host(input)
    if dim is None:
        lines = arr.reshape(-1, 1)
        out_shape = arr.shape
    else:
        dim = wrap_dim(dim, max(arr.ndim, 1))
        lines = np.moveaxis(arr, dim, 0).reshape(arr.shape[dim] if arr.ndim else 1, -1)
        out_shape = (-1,)
    if len(lines) == 0:
        starts = np.zeros(0, np.int64)
    else:
        changed = np.any(lines[1:] != lines[:-1], axis=1)
        starts = np.concatenate(([0], np.nonzero(changed)[0] + 1))
    counts = np.diff(np.append(starts, len(lines)))
    inverse = np.repeat(np.arange(len(starts)), counts)
    if dim is None:
        values = arr.reshape(-1)[starts]
    else:
        values = np.take(arr, starts, axis=dim)
    return _unique_results(input, values, inverse, counts, return_inverse, return_counts, out_shape)


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
    if sorted_sequence._device.type == "cuda":
        values_shape = () if scalar else tuple(input.shape)
        if sorted_sequence._data.ndim > 1 and (scalar or tuple(sorted_sequence.shape[:-1]) != values_shape[:-1]):
            raise _batch_mismatch(sorted_sequence.shape, values_shape)
        values = np.asarray(input) if scalar else input._data
        return _into(CC.searchsorted(sorted_sequence, values, right, sorter, out_int32), out)
    seq = _comparable(host(sorted_sequence))
    if sorter is not None:
        seq = np.take_along_axis(seq, host(sorter), axis=-1)
    values = np.asarray(input) if scalar else _comparable(host(input))
    where_side = "right" if right else "left"
    if seq.ndim == 1:
        found = np.searchsorted(seq, values, side=where_side)
    else:
        if scalar or seq.shape[:-1] != values.shape[:-1]:
            raise _batch_mismatch(seq.shape, values.shape)
        flat_seq, flat_vals = seq.reshape(-1, seq.shape[-1]), values.reshape(-1, values.shape[-1])
        found = np.stack([np.searchsorted(s, v, side=where_side) for s, v in zip(flat_seq, flat_vals)])
        found = found.reshape(values.shape)
    dtype = D.int32 if out_int32 else D.int64
    device = sorted_sequence._device
    return _into(wrap(np.asarray(found, dtype=dtype.np), dtype, device), out)


def _check_sorter(sorter, length):
    """PyTorch's errors for a sorter that is not int64 or points outside the sequence."""
    if sorter._dtype is not D.int64:
        raise RuntimeError("torch.searchsorted(): sorter must be a tensor of long dtype but got dtype "
                           f"{_iter.type_name(sorter._dtype)}")
    if not sorter._data.size:
        return
    if sorter._device.type == "cuda":
        lo, hi = CC.index_range(sorter)  # two numbers read back: the kernel must not read outside
    else:
        lo, hi = int(host(sorter).min()), int(host(sorter).max())
    if lo < 0 or hi >= length:
        raise RuntimeError("torch.searchsorted(): sorter index out of range")


def _comparable(arr):
    # NumPy misorders bfloat16 NaN (ml_dtypes): compare as float32, exact for bfloat16.
    return arr.astype(np.float32) if arr.dtype == D.bfloat16.np else arr


def _batch_mismatch(seq_shape, values_shape):
    return RuntimeError(
        "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions "
        "of boundaries tensor and input value tensor must match, but we got boundaries tensor "
        f"{list(seq_shape)} and input value tensor {list(values_shape)}")


def _into(result, out):
    if out is None:
        return result
    from .elementwise import copy_to_out
    return copy_to_out(result, out)


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
    on_cuda = input._device.type == "cuda"
    lo, hi = float(min), float(max)
    if on_cuda:
        if lo == hi and input._data.size:
            lo, hi = CC.data_range(input)  # read back, as PyTorch's CUDA histc does
    else:
        values = host(input).reshape(-1).astype(np.float64)
        if lo == hi and values.size:
            lo, hi = float(values.min()), float(values.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (np.isfinite(lo) and np.isfinite(hi)):  # NaN or inf bounds would index out of range
        raise RuntimeError(f"torch.histc: range of [{lo:g}, {hi:g}] is not finite")
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    if on_cuda:
        return _into(CC.histc(input, bins, lo, hi), out)
    counts = np.zeros(bins, np.float64)
    K.histc(values, lo, hi, counts)
    return _into(wrap(counts.astype(input._dtype.np), input._dtype, input._device), out)


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
    on_cuda = input._device.type == "cuda"
    if on_cuda:
        negative = input._data.size and CC.smallest(input) < 0  # read back, as PyTorch's CUDA bincount
    else:
        values = host(input).astype(np.int64)
        negative = values.size and values.min() < 0
    if negative:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is not None and weights._data.shape != input._data.shape:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    if on_cuda:
        return CC.bincount(input, weights, minlength)
    size = _larger(int(values.max()) + 1 if values.size else 0, minlength)
    if weights is None:
        counts = np.zeros(size, np.int64)
        K.bincount(values, np.zeros(0, np.int64), counts)
        return wrap(counts, D.int64, input._device)
    dtype = weights._dtype if weights._dtype in (D.float32, D.float64) else D.float64
    counts = np.zeros(size, np.float64)
    K.bincount(values, host(weights).astype(np.float64), counts)
    return wrap(counts.astype(dtype.np), dtype, input._device)


def _larger(a, b):
    return a if a >= b else b
