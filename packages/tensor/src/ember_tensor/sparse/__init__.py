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

from .. import _backends
from .. import _dtype as D
from .._dispatch import op
from .._ops.nn._common import array_of, tensor_of
from .._tensor import Tensor, wrap_dim
from . import _compose
from ._coo import SparseTensor, make_sparse
from .._backends.lazy import lazy_module

_K = lazy_module("ember_tensor._backends.cpu.kernels.sparse")  # loads Numba on first use

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
    """Sparse (n, k) @ dense (k, m) -> dense (n, m), by the backend's kernel over the entries."""
    _check_mm(mat1, mat2)
    if mat1._device != mat2._device:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                           f"{mat2._device} and {mat1._device}!")
    dtype = D.promote_types(mat1._dtype, mat2._dtype)
    out = _backends.get(mat2._device).sparse.spmm(mat1._indices_t._data, array_of(mat1._values_t),
                                                   array_of(mat2), mat1.shape[0], dtype.np, mat1._coalesced)
    return tensor_of(out, dtype, mat2._device)


@op("sparse_sampled_dense_product")
def sampled_dense_product(pattern, a, b):
    """(a @ b.T) read only at `pattern`'s entries, as a sparse tensor on that pattern.

    This is the gradient of ``mm(S, D)`` with respect to S: grad @ D.T on S's pattern.
    """
    backend = _backends.get(pattern._device)
    out = backend.sparse.sampled_dot(pattern._indices_t._data, array_of(a), array_of(b))
    return make_sparse(pattern._indices_t, tensor_of(out, pattern._dtype, pattern._device), pattern.shape,
                       pattern._dtype, pattern._coalesced, device=pattern._device)


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
    if input._device.type == "cuda":  # the composition of device ops (the CPU's below is NumPy)
        idx, vals, size = _compose.sparse_sum(input, dim, out_dtype)
        return vals if idx is None else make_sparse(idx, vals, size, out_dtype, True, device=input._device)
    vals = array_of(input._values_t)
    if dim is None:
        return tensor_of(np.asarray(vals.sum()), out_dtype, input._device)
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
        return tensor_of(np.asarray(vals.sum(axis=0)), out_dtype, input._device)
    idx = input._indices_t._data[kept]
    new_idx, new_vals = _backends.get(input._device).sparse.coalesce(idx, vals, tuple(shape[d] for d in kept))
    return make_sparse(new_idx, new_vals, tuple(shape[d] for d in kept) + dense_shape, out_dtype, True, device=input._device)


def _softmax_values(input, dim, log):
    s = input.coalesce()
    d = wrap_dim(dim, input.dim())
    if s._device.type == "cuda":  # the composition of device ops (the CPU's below is NumPy)
        return s, _compose.softmax_values(s, d, log)
    idx, vals = s._indices_t._data, array_of(s._values_t, np.float64)
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
