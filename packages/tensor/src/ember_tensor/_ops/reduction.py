"""Reductions: sum, mean, prod, max/min, amax/amin, argmax/argmin, all/any, count_nonzero
(and, from `reduction_stats`, var/std, var_mean/std_mean, norm, logsumexp, median).

This is the device-independent half: argument parsing, PyTorch's dtype rules and
errors, keepdim and out=. The kernels are the backend's (`_backends.cpu.reduction` documents the
four functions a backend offers); composites (std, norm, logsumexp) are built from
them and from elementwise ops.
"""
import builtins

import numpy as np

from .. import _backends
from .. import _dtype as D
from .. import return_types
from .._dispatch import op
from .._size import Size
from .._tensor import Tensor, wrap_dim
from . import _iter
from . import elementwise as E
from .elementwise import copy_to_out

__all__ = [
    "sum", "mean", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "all", "any", "count_nonzero",
    "return_types",
]


# --- torch.return_types ---------------------------------------------------------------

# torch.return_types.max, .min, ...: (values, indices) pairs
for _name in ("max", "min", "median", "nanmedian", "mode", "kthvalue", "sort", "topk", "cummax", "cummin"):
    return_types.structseq(_name, ("values", "indices"))


# --- argument handling ----------------------------------------------------------------

def _dim_index(d, name):
    if isinstance(d, Tensor):
        d = d.__index__()
    if isinstance(d, builtins.bool) or not isinstance(d, (builtins.int, np.integer)):
        raise TypeError(f"{name}(): argument 'dim' must be tuple of ints, not {type(d).__name__}")
    return builtins.int(d)


def _reduce_dims(input, dim, name, empty_is_all=True):
    """Sorted, wrapped, distinct dims to reduce; None (and, for most ops, ()) means all."""
    ndim = input._data.ndim
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, (tuple, list, Size)):
        if not dim and empty_is_all:
            return tuple(range(ndim))
        dims = [wrap_dim(_dim_index(d, name), ndim) for d in dim]
    else:
        dims = [wrap_dim(_dim_index(dim, name), ndim)]
    seen = set()
    for d in dims:
        if d in seen:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        seen.add(d)
    # A 0-d tensor accepts dim 0 / -1 and has nothing to reduce over.
    return tuple(sorted(dims)) if ndim else ()


def _single_dim(input, dim, name):
    """A wrapped int dim, for ops that reduce exactly one dimension."""
    if isinstance(dim, (tuple, list)):
        raise TypeError(f"{name}(): argument 'dim' (position 1) must be int, not {type(dim).__name__}")
    return wrap_dim(_dim_index(dim, name), input._data.ndim)


def _check_tensor(input, name):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")


def _check_nonempty(input, dims, name, dim_given, error=RuntimeError, hint=True):
    """Reductions without an identity (max, argmax, ...) refuse empty reduced dims."""
    if input._data.size:
        return
    if not dim_given:
        more = " Specify the reduction dim with the 'dim' argument." if hint else ""
        raise error(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.{more}")
    for d in dims:
        if input._data.shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def _out_shape(input, dims, keepdim):
    shape = input._data.shape
    if len(dims) == len(shape):  # a full reduction (the common `x.sum()`)
        return (1,) * len(shape) if keepdim else ()
    if keepdim:
        return tuple(1 if d in dims else n for d, n in enumerate(shape))
    return tuple(n for d, n in enumerate(shape) if d not in dims)


def _kernel_data(t, dtype=None):
    """`t`'s backend array as kernels read it: in `dtype` if given, float16/bfloat16 as float32."""
    target = _iter.compute_dtype(dtype or t._dtype)
    data = t._data
    if data.dtype != target.np:
        data = _backends.get(t._device).storage.astype(data, target.np)
    return data


def _result(data, dtype, device, shape):
    """A tensor of `dtype` over backend result array `data`, reshaped to `shape`."""
    if data.dtype != dtype.np:
        data = _backends.get(device).storage.astype(data, dtype.np)
    if tuple(data.shape) != shape:
        data = data.reshape(shape)
    return Tensor._wrap(data, dtype, device)


def _reduce(kind, input, dims, keepdim, result_dtype, cast_to=None, out=None):
    """Backend reduction `kind` of `input` over `dims` as a tensor of `result_dtype`."""
    data = _kernel_data(input, cast_to)
    kernel_out = _iter.compute_dtype(result_dtype)
    values = _backends.get(input._device).reduction.reduce(kind, data, dims, kernel_out.np)
    return copy_to_out(_result(values, result_dtype, input._device,
                               _out_shape(input, dims, keepdim)), out)


def _pair(cls, values, indices, out):
    if out is None:
        return cls(values, indices)
    copy_to_out(values, out[0])
    copy_to_out(indices, out[1])
    return getattr(return_types, cls.__name__ + "_out")(out[0], out[1])


# --- sum, mean, prod --------------------------------------------------------------------

def _sum_dtype(input, dtype):
    if dtype is not None:
        return D.to_dtype(dtype)
    return input._dtype if input._dtype.category >= D._FLOAT else D.int64


@op()
def sum(input, dim=None, keepdim=False, *, dtype=None, out=None):  # noqa: A001
    """Sum over all elements or over `dim` (int or tuple). Integers and bool sum to int64.

    >>> sum(tensor([[1, 2], [3, 4]]), 0)
    tensor([4, 6])
    """
    _check_tensor(input, "sum")
    result = _sum_dtype(input, dtype)
    dims = _reduce_dims(input, dim, "sum")
    return _reduce("sum", input, dims, keepdim, result, result if dtype else None, out)


@op()
def mean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Arithmetic mean over all elements or over `dim`; floating inputs (or `dtype`) only.

    >>> mean(tensor([[1., 2.], [3., 4.]]), 1)
    tensor([1.5000, 3.5000])
    """
    _check_tensor(input, "mean")
    result = input._dtype if dtype is None else D.to_dtype(dtype)
    if result.category < D._FLOAT:
        which = "Input" if dtype is None else "Optional"
        raise RuntimeError(
            f"mean(): could not infer output dtype. {which} dtype must be either a floating point "
            f"or complex dtype. Got: {_iter.type_name(result)}")
    dims = _reduce_dims(input, dim, "mean")
    return _reduce("mean", input, dims, keepdim, result, result if dtype else None, out)


@op()
def prod(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Product over all elements or over one int `dim`. Integers and bool give int64.

    >>> prod(tensor([[1, 2], [3, 4]]), 1)
    tensor([ 2, 12])
    """
    _check_tensor(input, "prod")
    result = _sum_dtype(input, dtype)
    dims = tuple(range(input._data.ndim)) if dim is None else (
        (_single_dim(input, dim, "prod"),) if input._data.ndim else ())
    return _reduce("prod", input, dims, keepdim, result, result if dtype else None, out)


# --- max, min, amax, amin, argmax, argmin ---------------------------------------------------

def _reject_complex(input, kernel):
    """Complex numbers have no order: PyTorch's dispatch error naming its `kernel`."""
    if isinstance(input, Tensor) and input._dtype.category == D._COMPLEX:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_iter.type_name(input._dtype)}\'')


def _extreme(name, input, dim, keepdim, other, out):
    if isinstance(dim, Tensor) or other is not None:  # max(input, other): elementwise
        return (E.maximum if name == "max" else E.minimum)(input, other if other is not None else dim,
                                                       out=out)
    _check_tensor(input, name)
    if dim is not None and input._dtype.category == D._COMPLEX:
        raise RuntimeError(f"{name}(): does not support complex input")
    _reject_complex(input, f"{name}_all")
    if dim is None:
        _check_nonempty(input, (), name, False)
        return _reduce("a" + name, input, tuple(range(input._data.ndim)), False, input._dtype,
                       out=out)
    d = _single_dim(input, dim, name)
    dims = (d,) if input._data.ndim else ()
    _check_nonempty(input, dims, name, True)
    return _pair(getattr(return_types, name), *_arg_reduce(name, input, dims, keepdim), out)


def _arg_reduce(kind, input, dims, keepdim):
    """(values, indices) tensors of the max/min over one dim (`dims` = (d,)) or all dims."""
    data = _kernel_data(input)
    dim = dims[0] if len(dims) == 1 and input._data.ndim else None
    values, indices = _backends.get(input._device).reduction.arg_reduce(kind, data, dim)
    shape = _out_shape(input, dims, keepdim)
    return (_result(values, input._dtype, input._device, shape),
            _result(indices, D.int64, input._device, shape))


@op()
def max(input, dim=None, keepdim=False, *, other=None, out=None):  # noqa: A001
    """The largest element; with `dim`, a (values, indices) pair; with a tensor, `maximum`.

    NaN propagates. Ties give the first index.

    >>> max(tensor([[1, 5], [7, 2]]), 1)
    torch.return_types.max(
    values=tensor([5, 7]),
    indices=tensor([1, 0]))
    """
    return _extreme("max", input, dim, keepdim, other, out)


@op()
def min(input, dim=None, keepdim=False, *, other=None, out=None):  # noqa: A001
    """The smallest element; with `dim`, a (values, indices) pair; with a tensor, `minimum`."""
    return _extreme("min", input, dim, keepdim, other, out)


def _amax_amin(name, input, dim, keepdim, out):
    _check_tensor(input, name)
    _reject_complex(input, f"{name[1:]}_values_cpu")
    dims = _reduce_dims(input, dim, name)
    given = not (dim is None or (isinstance(dim, (tuple, list, Size)) and not dim))
    _check_nonempty(input, dims, name, given)
    return _reduce(name, input, dims, keepdim, input._dtype, out=out)


@op()
def amax(input, dim=(), keepdim=False, *, out=None):
    """The maximum over `dim` (int or tuple; () means all dims). NaN propagates.

    >>> amax(tensor([[1., 5.], [7., 2.]]), 0)
    tensor([7., 5.])
    """
    return _amax_amin("amax", input, dim, keepdim, out)


@op()
def amin(input, dim=(), keepdim=False, *, out=None):
    """The minimum over `dim` (int or tuple; () means all dims). NaN propagates."""
    return _amax_amin("amin", input, dim, keepdim, out)


def _argextreme(name, input, dim, keepdim, out):
    _check_tensor(input, name)
    if input._dtype is D.bool:
        raise RuntimeError(f"{name}(): does not support bool input")
    if input._dtype.category == D._COMPLEX:
        raise RuntimeError(f"{name}(): does not support complex input")
    ndim = input._data.ndim
    if dim is None:
        _check_nonempty(input, (), name, False, IndexError, hint=False)
        dims = tuple(range(ndim))
    else:
        dims = (_single_dim(input, dim, name),) if ndim else ()
        _check_nonempty(input, dims, name, True)
    _, indices = _arg_reduce(name[3:], input, dims, keepdim)
    return copy_to_out(indices, out)


@op()
def argmax(input, dim=None, keepdim=False, *, out=None):
    """Index of the largest element: flat when `dim` is None, else along `dim`.

    >>> argmax(tensor([[1, 5], [7, 2]]))
    tensor(2)
    """
    return _argextreme("argmax", input, dim, keepdim, out)


@op()
def argmin(input, dim=None, keepdim=False, *, out=None):
    """Index of the smallest element: flat when `dim` is None, else along `dim`."""
    return _argextreme("argmin", input, dim, keepdim, out)


# --- all, any, count_nonzero ------------------------------------------------------------------

def _all_any(name, input, dim, keepdim, out):
    _check_tensor(input, name)
    dims = _reduce_dims(input, dim, name, empty_is_all=False)
    result = D.uint8 if input._dtype is D.uint8 else D.bool
    return _reduce(name, input, dims, keepdim, result, out=out)


@op()
def all(input, dim=None, keepdim=False, *, out=None):  # noqa: A001
    """Whether every element is nonzero (over all, or `dim`); bool (uint8 for uint8 input).

    >>> all(tensor([[True, False], [True, True]]), 1)
    tensor([False,  True])
    """
    return _all_any("all", input, dim, keepdim, out)


@op()
def any(input, dim=None, keepdim=False, *, out=None):  # noqa: A001
    """Whether some element is nonzero (over all, or `dim`); bool (uint8 for uint8 input)."""
    return _all_any("any", input, dim, keepdim, out)


@op()
def count_nonzero(input, dim=None):
    """Number of nonzero elements (over all, or `dim`: int or tuple), as int64.

    >>> count_nonzero(tensor([[0, 1], [2, 3]]), 0)
    tensor([1, 2])
    """
    _check_tensor(input, "count_nonzero")
    dims = _reduce_dims(input, dim, "count_nonzero")
    if input._dtype.category == D._COMPLEX:
        input = E.ne(input, 0)  # the bool kernel counts complex numbers too: no complex specialisation
    return _reduce("count_nonzero", input, dims, False, D.int64)


@op()
def sum_to_size(self, *size):
    """Sum `self` down to `size`, which must expand to `self`'s shape: the inverse of
    ``expand`` (a Tensor method only, as in PyTorch; `self` itself when nothing is summed).

    >>> tensor([[1, 2], [3, 4]]).sum_to_size(1, 2)
    tensor([[4, 6]])
    """
    if len(size) == 1 and not isinstance(size[0], (builtins.int, np.integer)):
        size = tuple(size[0])
    shape = tuple(self.shape)
    lead = len(shape) - len(size)
    if lead < 0 or builtins.any(s != 1 and s != shape[lead + i] for i, s in enumerate(size)):
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(shape)}}}.")
    dims = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(size) if s == 1 and shape[lead + i] != 1)
    if not dims:
        return self
    return sum(self, dims, keepdim=True).reshape(size)
