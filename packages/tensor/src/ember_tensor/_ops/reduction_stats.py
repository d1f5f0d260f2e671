"""Statistical reductions and norms: var, std, var_mean, std_mean (unbiased / correction),
norm (p = 2/'fro', 1, inf, -inf, 0, any float), logsumexp, median, and the compositions
nansum, nanmean and aminmax.

The device-independent half, like `reduction`: argument parsing, PyTorch's dtype rules,
errors and warnings; the kernels are the backend's (`var_mean`, `reduce`, `median`) and
elementwise ops. `reduction` re-exports them.
"""
import builtins
import warnings

import numpy as np

from .. import _backends
from .. import _dtype as D
from .._dispatch import op
from .._runtime.determinism import alert_if_atomic
from .._tensor import wrap_dim
from . import _iter
from .complex_views import imag, real
from .elementwise.complex_numbers import complex as complex_
from .linalg.norms import vector_norm
from . import elementwise as E
from .elementwise import copy_to_out
from .reduction import (
    _check_nonempty, _check_tensor, _kernel_data, _out_shape, _pair, _reduce, _reduce_dims, _reject_complex, _result,
    _single_dim, return_types,
)

__all__ = ["var", "std", "var_mean", "std_mean", "norm", "renorm", "logsumexp", "median", "nansum",
           "nanmean", "aminmax"]

_INF = float("inf")


# --- var, std -------------------------------------------------------------------------------

def _var_args(name, input, dim, unbiased, correction):
    """PyTorch's overloads: var(dim, unbiased, keepdim), var(unbiased), var(dim, correction=)."""
    _check_tensor(input, name)
    if isinstance(dim, builtins.bool):  # var(input, unbiased)
        if unbiased is not None:
            raise TypeError(f"{name}() received an invalid combination of arguments")
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise TypeError(f"{name}() received an invalid combination of arguments: pass either "
                        "unbiased or correction, not both")
    if input._dtype.category not in (D._FLOAT, D._COMPLEX):
        raise RuntimeError("std and var only support floating point and complex dtypes")
    if correction is None:
        correction = 0 if unbiased is False else 1
    dims = _reduce_dims(input, dim, name)
    n = 1
    for d in dims:
        n *= input._data.shape[d]
    if n - correction <= 0:
        warnings.warn(
            f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the "
            "reduction factor (input numel divided by output numel).", UserWarning, stacklevel=2)
    return dims, correction


def _var_mean(name, input, dim, unbiased, keepdim, correction, sqrt_var):
    dims, correction = _var_args(name, input, dim, unbiased, correction)
    if input._dtype.category == D._COMPLEX:
        # |z - mean|^2 = (x - mean_x)^2 + (y - mean_y)^2: the real kernel on each part; the
        # variance is real, the mean complex (PyTorch's dtypes).
        (var_x, mean_x), (var_y, mean_y) = (_var_mean_of(part, dims, keepdim, correction)
                                            for part in (real(input), imag(input)))
        var = E.add(var_x, var_y)
        return (E.sqrt(var) if sqrt_var else var).to(input._dtype.to_real()), complex_(mean_x, mean_y)
    var, mu = _var_mean_of(input, dims, keepdim, correction)
    if sqrt_var:
        var = E.sqrt(var)
    return var.to(input._dtype), mu


def _var_mean_of(input, dims, keepdim, correction):
    """(variance in the compute dtype, mean in input's dtype) of a real `input` over `dims`."""
    var, mu = _backends.get(input._device).reduction.var_mean(_kernel_data(input), dims, correction)
    shape = _out_shape(input, dims, keepdim)
    return (_result(var, _iter.compute_dtype(input._dtype), input._device, shape),
            _result(mu, input._dtype, input._device, shape))


@op()
def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """Variance over all elements or `dim`, dividing by N - correction (default 1).

    >>> var(tensor([1., 2., 3., 4.]))
    tensor(1.6667)
    """
    return copy_to_out(_var_mean("var", input, dim, unbiased, keepdim, correction, False)[0], out)


@op()
def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """Standard deviation: the square root of `var` (same arguments).

    >>> std(tensor([1., 2., 3., 4.]), correction=0)
    tensor(1.1180)
    """
    return copy_to_out(_var_mean("std", input, dim, unbiased, keepdim, correction, True)[0], out)


@op()
def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(var, mean) in one pass over the data; arguments as for `var`."""
    return _var_mean("var_mean", input, dim, unbiased, keepdim, correction, False)


@op()
def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(std, mean); arguments as for `var`."""
    return _var_mean("std_mean", input, dim, unbiased, keepdim, correction, True)


# --- norm, logsumexp ------------------------------------------------------------------------

def _norm_dtypes(input, dtype):
    """The (real) result dtype of a norm of `input` with dtype= `dtype`."""
    if input._dtype.category not in (D._FLOAT, D._COMPLEX):
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {_iter.type_name(input._dtype)}")
    if dtype is None:
        return input._dtype.to_real()
    dtype = D.to_dtype(dtype)
    if D.promote_types(input._dtype, dtype) is not dtype:
        raise RuntimeError(
            f"linalg.vector_norm: the dtype of the input ({_iter.type_name(input._dtype)}) should "
            f"be convertible without narrowing to the specified dtype ({_iter.type_name(dtype)})")
    return dtype.to_real()


@op(composite=True)
def renorm(input, p, dim, maxnorm, *, out=None):
    """Each slice of `input` along `dim` whose `p`-norm exceeds `maxnorm`, scaled down to
    norm `maxnorm` (by maxnorm / (norm + 1e-7), PyTorch's factor); the others unchanged.

    >>> renorm(tensor([[3., 4.], [0.3, 0.4]]), 2, 0, 1.)
    tensor([[0.6000, 0.8000],
            [0.3000, 0.4000]])
    """
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if input.dim() <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.dim()} dimensions")
    dim = wrap_dim(dim, input.dim())
    norms = vector_norm(input, p, [d for d in range(input.dim()) if d != dim], keepdim=True)
    factor = E.where(E.gt(norms, maxnorm), E.div(maxnorm, E.add(norms, 1e-7)), 1.0).to(input.dtype)
    result = E.mul(input, factor)
    return result if out is None else copy_to_out(result, out)


def renorm_(self, p, dim, maxnorm):
    """In-place `renorm`."""
    return self.copy_(renorm(self, p, dim, maxnorm))


@op()
def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """The vector p-norm over all elements or `dim`: p = 2 ('fro'), 1, inf, -inf, 0 or any float.

    >>> norm(tensor([3., -4.]))
    tensor(5.)
    """
    _check_tensor(input, "norm")
    result = _norm_dtypes(input, dtype)
    if p is None or p == "fro":
        if isinstance(dim, (tuple, list)) and len(dim) > 2:
            raise RuntimeError("linalg.matrix_norm: dim must be a 2-tuple. Got "
                               + " ".join(str(d) for d in dim))
        p = 2
    elif isinstance(p, str):
        raise NotImplementedError(
            f"norm(p={p!r}) is not supported by ember; use p='fro' or a number")
    dims = _reduce_dims(input, dim, "norm")
    compute = _iter.compute_dtype(result)
    x = (E.abs(input) if input._dtype.category == D._COMPLEX else input).to(compute)  # norms of |z|
    if p == 2:
        r = E.sqrt(_reduce("sumsq", x, dims, keepdim, compute))
    elif p == 1:
        r = _reduce("sumabs", x, dims, keepdim, compute)
    elif p == 0:
        r = _reduce("count_nonzero", x, dims, keepdim, compute)
    elif p in (_INF, -_INF):
        if builtins.any(input._data.shape[d] == 0 for d in dims) or (not dims and not input._data.size):
            raise RuntimeError(
                f"linalg.vector_norm cannot compute the {p} norm on an empty tensor because the "
                "operation does not have an identity")
        r = _reduce("amax" if p > 0 else "amin", E.abs(x), dims, keepdim, compute)
    else:
        r = E.pow(_reduce("sum", E.pow(E.abs(x), p), dims, keepdim, compute), 1.0 / p)
    return copy_to_out(r.to(result), out)


@op()
def logsumexp(input, dim, keepdim=False, *, out=None):
    """log(sum(exp(input))) over `dim`, computed stably (the max is taken out first).

    >>> logsumexp(tensor([0., 0.]), 0)
    tensor(0.6931)
    """
    _check_tensor(input, "logsumexp")
    inexact = input._dtype.category in (D._FLOAT, D._COMPLEX)
    result = input._dtype if inexact else D.get_default_dtype()
    dims = _reduce_dims(input, dim, "logsumexp")
    compute = _iter.compute_dtype(result)
    x = input.to(compute)
    shape = _out_shape(input, dims, keepdim)
    if builtins.any(input._data.shape[d] == 0 for d in dims):
        from .creation import full
        return copy_to_out(full(shape, -_INF, dtype=result, device=input._device), out)
    # Complex numbers take out the largest real part (PyTorch's choice): it bounds |exp|.
    real_x = real(x) if result.category == D._COMPLEX else x
    m = _reduce("amax", real_x, dims, True, real_x._dtype)
    m = E.where(E.isinf(m), 0.0, m)  # all -inf (or an inf) must not turn into NaN
    r = E.log(_reduce("sum", E.exp(x - m), dims, True, compute)) + m
    return copy_to_out(r.reshape(shape).to(result), out)


# --- median ---------------------------------------------------------------------------------

@op()
def median(input, dim=None, keepdim=False, *, out=None):
    """The lower median of all elements, or (values, indices) along `dim`. NaN propagates.

    >>> median(tensor([4., 1., 3., 2.]))
    tensor(2.)
    """
    _check_tensor(input, "median")
    _reject_complex(input, "median_cpu" if dim is None else "median_out")
    if input._dtype is D.bool:
        raise NotImplementedError(f"\"median_{input._device.type}\" not implemented for 'Bool'")
    backend = _backends.get(input._device)
    ndim = input._data.ndim
    if dim is None:
        if input._data.size == 0:
            from .creation import full
            fill = float("nan") if input._dtype.category == D._FLOAT else np.iinfo(input._dtype.np).min
            return full((), fill, dtype=input._dtype, device=input._device)
        value, _ = backend.reduction.median(_kernel_data(input), None)
        return _result(value, input._dtype, input._device, ())
    d = _single_dim(input, dim, "median")
    # PyTorch's CUDA kernel picks among a repeated median's positions in no fixed order.
    alert_if_atomic(input, "median CUDA with indices output")
    if not ndim:
        from .creation import zeros
        values, indices = input.clone(), zeros((), dtype=D.int64, device=input._device)
    else:
        _check_nonempty(input, (d,), "median", True)
        values, indices = backend.reduction.median(_kernel_data(input), d)
        shape = _out_shape(input, (d,), keepdim)
        values = _result(values, input._dtype, input._device, shape)
        indices = _result(indices, D.int64, input._device, shape)
    return _pair(return_types.median, values, indices, out)


# --- nansum, nanmean, aminmax ------------------------------------------------------------

@op()
def nansum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """`sum` that treats NaN as zero (integers and bool sum to int64, as in `sum`).

    >>> nansum(tensor([1., float("nan"), 2.]))
    tensor(3.)
    """
    _check_tensor(input, "nansum")
    if input._dtype.category == D._COMPLEX:
        raise RuntimeError("nansum on CPU does not support complex inputs")  # (PyTorch's wording)
    if input._dtype.category == D._FLOAT:
        # A where, not a masked copy: autograd then gives NaN positions a zero gradient.
        input = E.where(E.isnan(input), 0.0, input)
    return copy_to_out(input.sum(dim if dim is not None else (), keepdim, dtype=dtype), out)


@op()
def nanmean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """`mean` over the elements that are not NaN (NaN where all of them are).

    >>> nanmean(tensor([1., float("nan"), 2.]))
    tensor(1.5000)
    """
    _check_tensor(input, "nanmean")
    if input._dtype.category == D._COMPLEX:
        raise RuntimeError("nansum on CPU does not support complex inputs")  # nanmean is nansum / count
    if input._dtype.category != D._FLOAT:
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype but got "
                           f"{_iter.type_name(input._dtype)}")
    dims = dim if dim is not None else ()
    count = E.logical_not(E.isnan(input)).sum(dims, keepdim)
    return copy_to_out(E.div(nansum(input, dims, keepdim, dtype=dtype), count), out)


_MinMax = return_types.structseq("aminmax", ("min", "max"))


@op()
def aminmax(input, *, dim=None, keepdim=False, out=None):
    """The minimum and maximum of `input` (over `dim`, one int, when given), as a named
    tuple ``(min, max)``. NaN propagates.

    >>> aminmax(tensor([[1., 5.], [7., 2.]]), dim=0)
    torch.return_types.aminmax(
    min=tensor([1., 2.]),
    max=tensor([7., 5.]))
    """
    _check_tensor(input, "aminmax")
    _reject_complex(input, "aminmax_cpu")
    if dim is None:
        if input._data.size == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation "
                               "has no identity.")
        dims = ()
    else:
        if isinstance(dim, (tuple, list)):
            raise TypeError(f"aminmax(): argument 'dim' must be int, not {type(dim).__name__}")
        d = _single_dim(input, dim, "aminmax")
        if input._data.ndim and input._data.shape[d] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {d} to have non-zero size.")
        dims = (d,) if input._data.ndim else ()
    low, high = input.amin(dims, keepdim), input.amax(dims, keepdim)
    if dim is None and keepdim:
        shape = (1,) * input._data.ndim
        low, high = low.reshape(shape), high.reshape(shape)
    if out is not None:
        copy_to_out(low, out[0])
        copy_to_out(high, out[1])
        return _MinMax(out[0], out[1])
    return _MinMax(low, high)
