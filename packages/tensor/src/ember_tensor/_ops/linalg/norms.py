"""Norms of `ember_tensor.linalg`: vector_norm, matrix_norm and norm, composed of
reductions (and singular values for the spectral and nuclear norms), so autograd
differentiates them through those ops."""
import builtins

from ... import _dtype as D
from ..._dispatch import op
from ..._tensor import wrap_dim
from .. import views
from .lapack import check_float

__all__ = ["vector_norm", "matrix_norm", "norm"]

_INF = float("inf")


def _dims(dim, ndim):
    if dim is None:
        return None
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    return tuple(wrap_dim(d, ndim) for d in dims)


@op("linalg_vector_norm")
def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """The `ord`-norm of `x` over `dim` (all elements when None): (sum |x|^ord)^(1/ord).

    ord may be any real number, inf (max |x|), -inf (min |x|) or 0 (count of non-zeros).

    >>> import ember_tensor as torch
    >>> torch.linalg.vector_norm(torch.tensor([3., 4.])).item()
    5.0
    """
    if x._dtype.category < D._FLOAT:  # half precision is fine here, unlike in LAPACK
        check_float(x, "linalg.vector_norm")
    if dtype is not None:
        x = x.to(dtype)
    if x._dtype.category == D._COMPLEX:
        # The norm of complex numbers is that of their magnitudes: a real result.
        x = x.abs()
    dims = _dims(dim, x.dim())
    if dims is None or x.dim() == 0:
        reduce_dims = tuple(builtins.range(x.dim()))
    else:
        reduce_dims = dims
    a = x.abs()
    if ord == _INF:
        result = a.amax(reduce_dims, keepdim=keepdim) if reduce_dims else a.clone()
    elif ord == -_INF:
        result = a.amin(reduce_dims, keepdim=keepdim) if reduce_dims else a.clone()
    elif ord == 0:
        result = vector_norm_count(x, reduce_dims, keepdim)
    elif ord == 1:
        result = a.sum(reduce_dims, keepdim=keepdim)
    elif ord == 2:
        result = (x * x).sum(reduce_dims, keepdim=keepdim).sqrt()
    else:
        result = a.pow(ord).sum(reduce_dims, keepdim=keepdim).pow(1.0 / ord)
    if keepdim and dims is None and x.dim():
        result = result.reshape((1,) * x.dim())
    if out is not None:
        from ..elementwise import copy_to_out
        return copy_to_out(result, out)
    return result


@op("linalg_vector_norm_count")
def vector_norm_count(x, dims, keepdim):
    """vector_norm(x, 0): the count of non-zeros over `dims`, in x's dtype.

    An op of its own so that autograd can record it as PyTorch does: the result requires
    grad when x does, and backward sends x no gradient (None, not zeros).
    """
    return (x != 0).to(x.dtype.to_real()).sum(dims, keepdim=keepdim)


@op("linalg_matrix_norm")
def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    """A matrix norm over the two dims `dim`: 'fro', 'nuc', 1, -1, 2, -2, inf or -inf."""
    if A.dim() < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    if A._dtype.category != D._FLOAT:
        check_float(A, "linalg.matrix_norm")
    if dtype is not None:
        A = A.to(dtype)
    d0, d1 = _dims(dim, A.dim())
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, {dim[1]})")
    if ord == "fro":
        result = vector_norm(A, 2, (d0, d1), keepdim)
    elif ord in ("nuc", 2, -2):
        from .decompositions import svdvals
        s = svdvals(views.movedim(A, (d0, d1), (-2, -1)))
        result = s.sum(-1) if ord == "nuc" else (_max_of_norms(s, -1, False) if ord == 2 else s.amin(-1))
        if keepdim:
            for d in sorted((d0, d1)):
                result = result.unsqueeze(d)
    elif ord in (1, -1, _INF, -_INF):
        # 1: max column sum of |A|; inf: max row sum.
        summed, reduced = (d0, d1) if ord in (1, -1) else (d1, d0)
        sums = A.abs().sum(summed, keepdim=True)
        result = _max_of_norms(sums, reduced, True) if ord > 0 else sums.amin(reduced, keepdim=True)
        if not keepdim:
            result = result.squeeze((d0, d1))
    else:
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    if out is not None:
        from ..elementwise import copy_to_out
        return copy_to_out(result, out)
    return result


def _max_of_norms(values, dim, keepdim):
    """The largest of non-negative `values` along `dim`: 0 over an empty dim, as PyTorch's
    matrix norms of order 2, 1 and inf give for an empty matrix (the amin of the negative
    orders raises there, in both)."""
    if values.shape[dim] == 0:
        shape = list(values.shape)
        if keepdim:
            shape[dim] = 1
        else:
            del shape[dim]
        return values.new_zeros(shape)
    return values.amax(dim, keepdim=keepdim)


@op("linalg_norm")
def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):
    """A vector norm (1 dim, or all elements when `ord` and `dim` are None) or a matrix norm (2 dims)."""
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None and len(dim) == 2 or dim is None and ord is not None and A.dim() == 2:
        return matrix_norm(A, "fro" if ord is None else ord, dim if dim is not None else (-2, -1), keepdim,
                           dtype=dtype, out=out)
    if isinstance(ord, str) or (dim is None and ord is not None and A.dim() != 1):
        raise RuntimeError("linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                           f"Got {A.dim()}D.")
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype, out=out)
