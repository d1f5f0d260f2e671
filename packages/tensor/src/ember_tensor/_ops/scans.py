"""Scans along a dim: cumsum, cumprod, cummax, cummin, logcumsumexp; and diff.

Each scan runs a Numba row kernel (`_kernels/cpu_index`) over the lines along `dim`
laid out as a C-contiguous (rows, n) array. Floats accumulate in float64 and integers in
int64 (PyTorch's CPU accumulation types), then the result is cast to its dtype. CUDA
tensors scan on the device (`_backends.cuda.scans`, the same types and rules) after the same checks.
"""
import numpy as np

from .. import _dtype as D
from .._dispatch import op
from .._tensor import Tensor, wrap_dim
from .._backends.lazy import lazy, lazy_module

K = lazy("cpu.kernels.index")  # Numba loads on first use
CSC = lazy_module("ember_tensor._backends.cuda.scans")  # CUDA tensors: device kernels, loaded on first use
from . import _iter
from ._strided import from_rows, host, rows_of, wrap
from .reduction import _pair, return_types

__all__ = ["cumsum", "cumsum_", "cumprod", "cumprod_", "cummax", "cummin", "logcumsumexp", "diff"]


def _scan_dtype(input, dtype):
    if dtype is not None:
        return dtype
    return D.int64 if input._dtype.category != D._FLOAT else input._dtype


def _lines(input, dim, np_dtype):
    ndim = input._data.ndim
    dim = wrap_dim(dim, max(ndim, 1))
    arr = host(input)
    rows = rows_of(arr, dim, np_dtype) if ndim else np.ascontiguousarray(arr, dtype=np_dtype).reshape(1, 1)
    return dim, rows


def _accumulating_scan(kernel, identity, input, dim, dtype, out):
    result_dtype = _scan_dtype(input, dtype)
    if input._device.type == "cuda":
        result = CSC.accumulate(input, _line_dim(input, dim), identity == 1, result_dtype)
        return _into(result, out)
    floating = result_dtype.category == D._FLOAT
    acc_np = np.float64 if floating else np.int64
    # The kernel reads the input's dtype and writes the result's directly (no extra
    # passes); Numba lacks float16/bfloat16, which go through float32.
    read_np = np.float32 if input._dtype in _iter.LOW_PRECISION else None
    write_dtype = _iter.compute_dtype(result_dtype)
    dim, rows = _lines(input, dim, read_np)
    if not floating and rows.dtype.kind == "f":
        rows = rows.astype(np.int64)  # cumsum(float, dtype=int): PyTorch converts first
    scanned = np.empty(rows.shape, write_dtype.np)
    if rows.size:
        kernel(rows, acc_np(identity), scanned)
    values = from_rows(scanned, tuple(input._data.shape), dim)
    if write_dtype is not result_dtype:
        values = values.astype(result_dtype.np)
    result = wrap(values, result_dtype, input._device)
    if out is not None:
        from .elementwise import copy_to_out
        return copy_to_out(result, out)
    return result


@op()
def cumsum(input, dim, *, dtype=None, out=None):
    """Running sums along `dim` (integers and bool give int64).

    >>> cumsum(tensor([1, 2, 3]), 0)
    tensor([1, 3, 6])
    """
    return _accumulating_scan(K.cumsum_rows, 0, input, dim, dtype, out)


@op("cumsum_", inplace=True)
def cumsum_(self, dim, *, dtype=None):
    """In-place `cumsum`."""
    return self.copy_(cumsum(self, dim, dtype=dtype))


@op()
def cumprod(input, dim, *, dtype=None, out=None):
    """Running products along `dim` (integers and bool give int64).

    >>> cumprod(tensor([1., 2., 3.]), 0)
    tensor([1., 2., 6.])
    """
    return _accumulating_scan(K.cumprod_rows, 1, input, dim, dtype, out)


@op("cumprod_", inplace=True)
def cumprod_(self, dim, *, dtype=None):
    """In-place `cumprod`."""
    return self.copy_(cumprod(self, dim, dtype=dtype))


def _line_dim(input, dim):
    return wrap_dim(dim, max(input._data.ndim, 1))


def _into(result, out):
    if out is None:
        return result
    from .elementwise import copy_to_out
    return copy_to_out(result, out)


def _cumextreme(input, dim, take_max, cls, out):
    if input._device.type == "cuda":
        return _pair(cls, *CSC.extreme(input, _line_dim(input, dim), take_max), out)
    work = _iter.compute_dtype(input._dtype)
    np_work = np.uint8 if work is D.bool else work.np
    dim, rows = _lines(input, dim, np_work)
    values = np.empty_like(rows)
    indices = np.empty(rows.shape, np.int64)
    if rows.size:
        K.cumextreme_rows(rows, take_max, values, indices)
    shape = tuple(input._data.shape)
    values = wrap(from_rows(values, shape, dim).astype(input._dtype.np), input._dtype, input._device)
    indices = wrap(from_rows(indices, shape, dim), D.int64, input._device)
    return _pair(cls, values, indices, out)


@op()
def cummax(input, dim, *, out=None):
    """(values, indices): the running maximum along `dim` and where it was last reached.

    >>> cummax(tensor([1, 3, 2]), 0).values
    tensor([1, 3, 3])
    """
    return _cumextreme(input, dim, True, return_types.cummax, out)


@op()
def cummin(input, dim, *, out=None):
    """(values, indices): the running minimum along `dim` and where it was last reached.

    >>> cummin(tensor([3, 1, 2]), 0).values
    tensor([3, 1, 1])
    """
    return _cumextreme(input, dim, False, return_types.cummin, out)


@op()
def logcumsumexp(input, dim, *, out=None):
    """log(cumsum(exp(input))) along `dim`, computed without overflow.

    >>> logcumsumexp(tensor([0., 0.]), 0)
    tensor([0.0000, 0.6931])
    """
    if input._dtype.category != D._FLOAT:
        raise NotImplementedError(
            f"\"logcumsumexp_out_{input._device.type}\" not implemented for '{_iter.type_name(input._dtype)}'")
    if input._device.type == "cuda":
        return _into(CSC.logcumsumexp(input, _line_dim(input, dim)), out)
    dim, rows = _lines(input, dim, np.float64)
    scanned = np.empty_like(rows)
    if rows.size:
        K.logcumsumexp_rows(rows, scanned)
    values = from_rows(scanned, tuple(input._data.shape), dim).astype(input._dtype.np)
    result = wrap(values, input._dtype, input._device)
    if out is not None:
        from .elementwise import copy_to_out
        return copy_to_out(result, out)
    return result


@op()
def diff(input, n=1, dim=-1, prepend=None, append=None, *, out=None):
    """The n-th forward difference along `dim` (``x[i+1] - x[i]``; for bool, ``!=``),
    after joining `prepend` and `append` to `input` along `dim`.

    >>> diff(tensor([1, 3, 6]))
    tensor([2, 3])
    """
    from .indexing import cat
    if input._data.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    dim = wrap_dim(dim, input._data.ndim)
    x = input
    if prepend is not None or append is not None:
        pieces = [_as_part(prepend, input, dim), input, _as_part(append, input, dim)]
        x = cat([p for p in pieces if p is not None], dim)
    for _ in range(n):
        length = x.shape[dim]
        if length == 0:
            break
        later, earlier = x.narrow(dim, 1, length - 1), x.narrow(dim, 0, length - 1)
        x = later.logical_xor(earlier) if x._dtype is D.bool else later - earlier
    if out is not None:
        from .elementwise import copy_to_out
        return copy_to_out(x, out)
    return x


def _as_part(value, input, dim):
    """A prepend/append value as a tensor joinable to `input` along `dim`."""
    if value is None:
        return None
    if not isinstance(value, Tensor):
        from .creation import full
        shape = list(input.shape)
        shape[dim] = 1
        return full(shape, value, dtype=input._dtype, device=input._device)
    if value._data.ndim == 0:
        shape = list(input.shape)
        shape[dim] = 1
        return value.expand(shape)
    return value
