"""``torch.sparse``: products, sums and softmaxes of sparse COO tensors.

`mm` is a dispatcher op (``sparse_mm``) so that autograd records it: its gradient with
respect to the sparse argument is sparse, on the argument's pattern (PyTorch's
``torch.sparse.mm`` contract), and with respect to the dense argument is dense.

>>> import ember_tensor as torch
>>> s = torch.sparse_coo_tensor([[0, 1], [1, 0]], [2., 3.], (2, 2))
>>> torch.sparse.mm(s, torch.ones(2, 2)).tolist()
[[2.0, 2.0], [3.0, 3.0]]
"""
from .. import _backends
from .. import _dtype as D
from .._dispatch import op
from .._ops import linalg as _linalg
from .._ops.nn._common import array_of, tensor_of
from .._tensor import wrap_dim
from . import _compose
from ._coo import SparseTensor, make_sparse

__all__ = ["mm", "addmm", "sum", "softmax", "log_softmax", "sampled_dense_product", "matmul_with_sparse"]


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
    """Matrix product of a sparse `mat1` with a dense (or sparse) `mat2`, or of a dense
    `mat1` with a sparse `mat2`.

    Sparse @ dense is dense; sparse @ sparse is sparse. Differentiable in both
    arguments; with a sparse first argument its gradient is sparse on its pattern (with a
    dense first argument the product is `mm`'s, whose gradients are dense).
    """
    if not isinstance(mat1, SparseTensor):
        if not isinstance(mat2, SparseTensor):
            raise RuntimeError("ember: sparse.mm expects a sparse argument")
        return _linalg.mm(mat1, mat2)  # dense @ sparse: differentiated as mm (dense gradients)
    if isinstance(mat2, SparseTensor):
        return sparse_mm(mat1, mat2.to_dense()).to_sparse()
    return sparse_mm(mat1, mat2)


def matmul_with_sparse(input, other):
    """``input @ other`` where one operand (or both) is a sparse COO matrix: what
    `torch.matmul`, `torch.mm`, `torch.spmm` and ``@`` compute for sparse operands.

    sparse (n, k) @ dense (k, m) or (k,) and dense (..., n, k) or (k,) @ sparse (k, m) are
    dense, through the backend's sparse kernel (the second as ``(S.T @ D.T).T``); sparse
    @ sparse is sparse. Autograd records the calling op (matmul), whose formula gives a
    dense gradient to a sparse operand, as PyTorch's does.

    >>> import ember_tensor as torch
    >>> s = torch.sparse_coo_tensor([[0, 1], [1, 0]], [2., 3.], (2, 2))
    >>> (torch.ones(1, 2) @ s).tolist()
    [[3.0, 2.0]]
    """
    if input.is_sparse:
        if input.dim() != 2:
            raise RuntimeError(f"sparse.mm: expected 2-D matrices, got {input.dim()}-D and {other.dim()}-D")
        if other.is_sparse:
            return mm(input, other)
        if other.dim() == 1:
            return sparse_mm(input, other.unsqueeze(1)).squeeze(1)
        if other.dim() != 2:
            raise NotImplementedError("ember: matmul of a sparse matrix with a batched dense tensor")
        return sparse_mm(input, other)
    if other.dim() != 2:
        raise RuntimeError(f"sparse.mm: expected 2-D matrices, got {input.dim()}-D and {other.dim()}-D")
    lead = tuple(input.shape[:-1])
    rows = input.reshape(-1, input.shape[-1])
    product = sparse_mm(other.t(), rows.t()).t()  # D @ S = (S.T @ D.T).T: the kernel wants S first
    return product.reshape(lead + (other.shape[1],))


SparseTensor._sparse_product = staticmethod(matmul_with_sparse)  # what linalg.matmul calls


@op()
def spmm(input, mat2):
    """Matrix product where `input` or `mat2` may be a sparse COO matrix (`torch.mm`).

    >>> import ember_tensor as torch
    >>> s = torch.sparse_coo_tensor([[0, 1], [1, 0]], [2., 3.], (2, 2))
    >>> torch.spmm(s, torch.ones(2, 1)).tolist()
    [[2.0], [3.0]]
    """
    return _linalg.mm(input, mat2)


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
    idx, vals, size = _compose.sparse_sum(input._indices_t, input._values_t, tuple(input.shape), dim, out_dtype)
    return vals if idx is None else make_sparse(idx, vals, size, out_dtype, True, device=input._device)


def _softmax(input, dim, dtype, log):
    s = input.coalesce()
    values = s._values_t if dtype is None else s._values_t.to(dtype)  # computed in `dtype`, as PyTorch
    out = _compose.softmax_values(s._indices_t, values, tuple(s.shape), wrap_dim(dim, input.dim()), log)
    return make_sparse(s._indices_t, out, s.shape, out._dtype, True, device=s._device)


def softmax(input, dim, dtype=None):
    """Softmax along `dim` over the specified entries only (unspecified ones count as -inf)."""
    return _softmax(input, dim, dtype, log=False)


def log_softmax(input, dim, dtype=None):
    """Log-softmax along `dim` over the specified entries only (see `softmax`)."""
    return _softmax(input, dim, dtype, log=True)
