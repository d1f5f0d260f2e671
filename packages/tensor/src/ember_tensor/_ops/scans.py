"""Scans along a dim: cumsum, cumprod, cummax, cummin, logcumsumexp; and diff.

Device-free: each scan checks its arguments with PyTorch's errors, plans the result
dtype and wraps `dim`, then calls its device's backend (`_backends.<device>.scans`: a
Numba row kernel over the lines along `dim` on the CPU, a chunked device scan on CUDA).
Floats accumulate in float64, complex numbers in complex128 and integers in int64
(PyTorch's CPU accumulation types), then the result is cast to its dtype. diff is composed of other ops.
"""
from .. import _backends
from .. import _dtype as D
from .._dispatch import op
from .._tensor import Tensor, wrap_dim
from . import _iter
from .creation import full
from .elementwise import copy_to_out
from .reduction import _pair, _reject_complex, return_types

__all__ = ["cumsum", "cumsum_", "cumprod", "cumprod_", "cummax", "cummin", "logcumsumexp", "diff"]


def _scans(t):
    """The scans family of `t`'s backend."""
    return _backends.get(t._device).scans


def _scan_dtype(input, dtype):
    if dtype is not None:
        return dtype
    return input._dtype if input._dtype.category in (D._FLOAT, D._COMPLEX) else D.int64


def _line_dim(input, dim):
    return wrap_dim(dim, max(input._data.ndim, 1))


def _into(result, out):
    return result if out is None else copy_to_out(result, out)


def _accumulating_scan(input, dim, is_prod, dtype, out):
    result_dtype = _scan_dtype(input, dtype)
    values = _scans(input).accumulate(input._data, _line_dim(input, dim), is_prod, result_dtype.np)
    return _into(Tensor._wrap(values, result_dtype, input._device), out)


@op()
def cumsum(input, dim, *, dtype=None, out=None):
    """Running sums along `dim` (integers and bool give int64).

    >>> cumsum(tensor([1, 2, 3]), 0)
    tensor([1, 3, 6])
    """
    return _accumulating_scan(input, dim, False, dtype, out)


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
    return _accumulating_scan(input, dim, True, dtype, out)


@op("cumprod_", inplace=True)
def cumprod_(self, dim, *, dtype=None):
    """In-place `cumprod`."""
    return self.copy_(cumprod(self, dim, dtype=dtype))


def _cumextreme(input, dim, take_max, cls, out):
    _reject_complex(input, "cummax_cpu" if take_max else "cummin_cpu")
    values, indices = _scans(input).extreme(input._data, _line_dim(input, dim), take_max)
    return _pair(cls, Tensor._wrap(values, input._dtype, input._device),
                 Tensor._wrap(indices, D.int64, input._device), out)


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
    """log(cumsum(exp(input))) along `dim`, computed without overflow (complex inputs too,
    with PyTorch's rules for infinite and NaN parts).

    >>> logcumsumexp(tensor([0., 0.]), 0)
    tensor([0.0000, 0.6931])
    """
    if input._dtype.category not in (D._FLOAT, D._COMPLEX) or input._dtype == D.complex32:
        raise NotImplementedError(
            f"\"logcumsumexp_out_{input._device.type}\" not implemented for '{_iter.type_name(input._dtype)}'")
    values = _scans(input).logcumsumexp(input._data, _line_dim(input, dim))
    return _into(Tensor._wrap(values, input._dtype, input._device), out)


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
    return _into(x, out)


def _as_part(value, input, dim):
    """A prepend/append value as a tensor joinable to `input` along `dim`."""
    if value is None:
        return None
    if not isinstance(value, Tensor):
        shape = list(input.shape)
        shape[dim] = 1
        return full(shape, value, dtype=input._dtype, device=input._device)
    if value._data.ndim == 0:
        shape = list(input.shape)
        shape[dim] = 1
        return value.expand(shape)
    return value
