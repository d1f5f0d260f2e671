"""``torch.sparse``: products, sums and softmaxes of sparse COO tensors.

`mm` is a dispatcher op (``sparse_mm``) so that autograd records it: its gradient with
respect to the sparse argument is sparse, on the argument's pattern (PyTorch's
``torch.sparse.mm`` contract), and with respect to the dense argument is dense.

>>> import ember_tensor as torch
>>> s = torch.sparse_coo_tensor([[0, 1], [1, 0]], [2., 3.], (2, 2))
>>> torch.sparse.mm(s, torch.ones(2, 2)).tolist()
[[2.0, 2.0], [3.0, 3.0]]
"""
import numpy as np

from .. import _dtype as D
from .._dispatch import op
from .._ops.nn._common import from_array, to_array
from ._coo import SparseTensor, make_sparse
from .._backends.lazy import lazy_module

_K = lazy_module("ember_tensor._backends.cpu.kernels.sparse")  # loads Numba on first use
# Below this many nonzeros a prange loop costs more to start than it saves.
PARALLEL_NNZ = 1 << 15
from .._tensor import Tensor, wrap_dim

__all__ = ["mm", "addmm", "sum", "softmax", "log_softmax", "sampled_dense_product"]


def _check_mm(mat1, mat2):
    if mat1.dim() != 2 or mat2.dim() != 2:
        raise RuntimeError(f"sparse.mm: expected 2-D matrices, got {mat1.dim()}-D and {mat2.dim()}-D")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"addmm: Argument #3 (dense): Expected dim 0 size {mat1.shape[1]}, "
                           f"got {mat2.shape[0]}")
    if mat1.dense_dim() != 0:
        raise NotImplementedError("ember: sparse.mm of a hybrid sparse tensor")


@op("sparse_mm")
def sparse_mm(mat1, mat2):
    """Sparse (n, k) @ dense (k, m) -> dense (n, m), by a Numba kernel over the entries."""
    _check_mm(mat1, mat2)
    dtype = D.promote_types(mat1._dtype, mat2._dtype)
    if mat2._device.type == "cuda" or mat1._device.type == "cuda":
        return _sparse_mm_cuda(mat1, mat2, dtype)
    s = mat1.coalesce() if mat1._nnz() >= PARALLEL_NNZ else mat1
    idx = s._indices_t._data
    vals = to_array(s._values_t).astype(dtype.np if dtype.np.kind == "f" else np.float64, copy=False)
    dense = np.ascontiguousarray(to_array(mat2), vals.dtype)
    out = np.zeros((mat1.shape[0], mat2.shape[1]), vals.dtype)
    if s._nnz() >= PARALLEL_NNZ:
        # Coalesced entries are sorted by row: each thread owns whole output rows.
        row_starts = np.searchsorted(idx[0], np.arange(mat1.shape[0] + 1)).astype(np.int64)
        _K.spmm_parallel(row_starts, np.ascontiguousarray(idx[1]), vals, dense, out)
    elif s._nnz():
        _K.spmm(np.ascontiguousarray(idx[0]), np.ascontiguousarray(idx[1]), vals, dense, out)
    return from_array(out, dtype, mat2._device)


def _sparse_mm_cuda(mat1, mat2, dtype):
    from .._ops.creation import zeros
    from .._backends.cuda.sparse import spmm_cuda
    if mat1._device != mat2._device:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                           f"{mat2._device} and {mat1._device}!")
    out = zeros((mat1.shape[0], mat2.shape[1]), dtype=dtype, device=mat2._device)
    values = mat1._values_t if mat1._dtype is dtype else mat1._values_t.to(dtype)
    dense = (mat2 if mat2._dtype is dtype else mat2.to(dtype)).contiguous()
    spmm_cuda(mat1._indices_t._data, values.contiguous()._data, dense._data, out._data)
    out._bump_version()
    return out


@op("sparse_sampled_dense_product")
def sampled_dense_product(pattern, a, b):
    """(a @ b.T) read only at `pattern`'s entries, as a sparse tensor on that pattern.

    This is the gradient of ``mm(S, D)`` with respect to S: grad @ D.T on S's pattern.
    """
    if pattern._device.type == "cuda":
        from .._backends.cuda.sparse import sampled_dot
        return make_sparse(pattern._indices_t, sampled_dot(pattern._indices_t, a, b), pattern.shape,
                           pattern._dtype, pattern._coalesced, device=pattern._device)
    idx = pattern._indices_t._data
    av = np.ascontiguousarray(to_array(a), np.float64)
    bv = np.ascontiguousarray(to_array(b), np.float64)
    out = np.empty(idx.shape[1], np.float64)
    if idx.shape[1]:
        _K.sampled_dot(np.ascontiguousarray(idx[0]), np.ascontiguousarray(idx[1]), av, bv, out)
    return make_sparse(idx, out, pattern.shape, pattern._dtype, pattern._coalesced, device=pattern._device)


def mm(mat1, mat2):
    """Matrix product of a sparse `mat1` with a dense (or sparse) `mat2`.

    Sparse @ dense is dense; sparse @ sparse is sparse. Differentiable in both
    arguments; the gradient of the sparse one is sparse on its pattern.
    """
    if not isinstance(mat1, SparseTensor):
        raise RuntimeError("ember: sparse.mm expects a sparse first argument")
    if isinstance(mat2, SparseTensor):
        return sparse_mm(mat1, mat2.to_dense()).to_sparse()
    return sparse_mm(mat1, mat2)


def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    """beta * mat + alpha * (mat1 @ mat2) with a sparse `mat1` and dense `mat` and `mat2`."""
    product = mm(mat1, mat2)
    if alpha != 1:
        product = product * alpha
    if beta == 0:
        return product
    return (mat * beta if beta != 1 else mat) + product


def sum(input, dim=None, dtype=None):
    """Sum of a sparse tensor: over everything (a 0-d dense tensor) or over `dim`s.

    Summing away every sparse dim gives a dense tensor; otherwise the result is sparse
    and coalesced, as ``torch.sparse.sum``.
    """
    out_dtype = input._dtype if dtype is None else dtype
    if out_dtype.category != D._FLOAT and dtype is None:
        out_dtype = D.int64 if out_dtype.category in (D._INT, D._BOOL) else out_dtype
    if input._device.type == "cuda":
        from .._backends.cuda.sparse import sparse_sum
        idx, vals, size = sparse_sum(input, dim, out_dtype)
        return vals if idx is None else make_sparse(idx, vals, size, out_dtype, True, device=input._device)
    vals = to_array(input._values_t)
    if dim is None:
        return from_array(np.asarray(vals.sum()), out_dtype, input._device)
    dims = sorted({wrap_dim(d, input.dim()) for d in ((dim,) if isinstance(dim, int) else dim)})
    sd = input.sparse_dim()
    sparse_red = [d for d in dims if d < sd]
    dense_red = tuple(d - sd + 1 for d in dims if d >= sd)
    if dense_red:
        vals = vals.sum(axis=dense_red)
    kept = [d for d in range(sd) if d not in sparse_red]
    shape = tuple(input.shape)
    dense_shape = tuple(s for i, s in enumerate(shape[sd:]) if i + sd not in dims)
    if not kept:
        return from_array(np.asarray(vals.sum(axis=0)), out_dtype, input._device)
    idx = input._indices_t._data[kept]
    from ._coo import coalesce_arrays
    new_idx, new_vals = coalesce_arrays(idx, vals, tuple(shape[d] for d in kept))
    return make_sparse(new_idx, new_vals, tuple(shape[d] for d in kept) + dense_shape, out_dtype, True, device=input._device)


def _softmax_values(input, dim, log):
    s = input.coalesce()
    d = wrap_dim(dim, input.dim())
    if s._device.type == "cuda":
        from .._backends.cuda.sparse import softmax_values
        return s, softmax_values(s, d, log)
    idx, vals = s._indices_t._data, to_array(s._values_t).astype(np.float64)
    sd = s.sparse_dim()
    if d >= sd:
        axis = d - sd + 1
        shifted = vals - vals.max(axis=axis, keepdims=True)
        lse = np.log(np.exp(shifted).sum(axis=axis, keepdims=True))
        out = shifted - lse
        return s, out if log else np.exp(out)
    # Entries that share every sparse coordinate but `d` form one softmax group; absent
    # entries count as -inf (they contribute nothing), as in torch.sparse.softmax.
    others = [i for i in range(sd) if i != d]
    keys = _K.flat_keys(idx[others], tuple(s.shape[i] for i in others))
    _, group = np.unique(keys, return_inverse=True)
    n_groups = int(group.max()) + 1 if group.size else 0
    peak = np.full((n_groups,) + vals.shape[1:], -np.inf)
    np.maximum.at(peak, group, vals)
    shifted = vals - peak[group]
    total = np.zeros_like(peak)
    np.add.at(total, group, np.exp(shifted))
    out = shifted - np.log(total[group])
    return s, out if log else np.exp(out)


def softmax(input, dim, dtype=None):
    """Softmax along `dim` over the specified entries only (unspecified ones count as -inf)."""
    s, out = _softmax_values(input, dim, log=False)
    return make_sparse(s._indices_t, out, s.shape, dtype or s._dtype, True, device=s._device)


def log_softmax(input, dim, dtype=None):
    """Log-softmax along `dim` over the specified entries only (see `softmax`)."""
    s, out = _softmax_values(input, dim, log=True)
    return make_sparse(s._indices_t, out, s.shape, dtype or s._dtype, True, device=s._device)
