"""``ember_tensor.linalg``: PyTorch's ``torch.linalg`` namespace.

Factorizations run in LAPACK through NumPy (batched over leading dims; LU and LDL, which
NumPy lacks, in NumPy code with LAPACK's conventions), products in BLAS; errors for singular or non-positive-definite inputs are `LinAlgError`s with
PyTorch's wording.

>>> import ember_tensor as torch
>>> A = torch.tensor([[4., 1.], [1., 3.]])
>>> torch.allclose(torch.linalg.inv(A) @ A, torch.eye(2))
True
"""
import math

from .. import _dtype
from .. import return_types
from .._ops.linalg.lapack import LinAlgError
from .._ops.linalg.products import matmul, matrix_exp, matrix_power, vdot
from .._ops.linalg.products import cross as _cross
from .._ops.linalg.decompositions import (
    cholesky, det, eigh, eigvalsh, inv, lstsq, matrix_rank, pinv, qr, slogdet, solve, solve_triangular, svd, svdvals,
)
from .._ops.linalg.eig import eig, eigvals
from .._ops.linalg.householder import householder_product
from .._ops.linalg.ldl import ldl_factor, ldl_factor_ex, ldl_solve
from .._ops.linalg.lu import lu, lu_factor, lu_factor_ex, lu_solve
from .._ops.linalg.norms import matrix_norm, norm, vector_norm
from .._ops.views import diagonal as _diagonal
from .._ops.indexing import cat as _cat

__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eig", "eigh", "eigvals",
           "eigvalsh", "householder_product", "inv", "inv_ex", "ldl_factor", "ldl_factor_ex", "ldl_solve", "lstsq",
           "lu", "lu_factor", "lu_factor_ex", "lu_solve", "matmul", "matrix_exp", "matrix_norm", "matrix_power", "matrix_rank", "multi_dot", "norm",
           "pinv", "qr", "slogdet", "solve", "solve_ex", "solve_triangular", "svd", "svdvals", "tensorinv",
           "tensorsolve", "vander", "vecdot", "vector_norm"]

_InvEx = return_types.structseq("linalg_inv_ex", ("inverse", "info"))
_CholeskyEx = return_types.structseq("linalg_cholesky_ex", ("L", "info"))
_SolveEx = return_types.structseq("linalg_solve_ex", ("result", "info"))


def cross(input, other, *, dim=-1, out=None):
    """Cross product of 3-vectors along `dim` (default: the last), broadcasting the inputs."""
    return _cross(input, other, dim, out=out)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """The `offset`-th diagonal of each matrix, as a view."""
    return _diagonal(A, offset, dim1, dim2)


def vecdot(x, y, *, dim=-1, out=None):
    """Dot products along `dim`, broadcasting the other dims; the first operand is
    conjugated (sum of conj(x) * y), as PyTorch's."""
    result = (x.conj() * y).sum(dim)
    return result if out is None else out.copy_(result)


def multi_dot(tensors, *, out=None):
    """The product of a chain of matrices (first/last may be vectors), left to right."""
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    result = tensors[0]
    for t in tensors[1:]:
        result = matmul(result, t)
    return result if out is None else out.copy_(result)


def vander(x, N=None):  # noqa: N803 - PyTorch's name
    """The Vandermonde matrices of the last dim of `x`, in increasing powers: column j is
    ``x ** j``, `N` columns (``x.shape[-1]`` by default). Integers give int64; bool is refused.

    Written as PyTorch writes it, a cumulative product of ``[1, x, x, ...]``, so its
    gradient is finite at zero.
    """
    if x.dtype == _dtype.bool:
        raise RuntimeError("linalg.vander supports floating point, complex, and integer tensors, but got Bool")
    if x.dim() < 1:
        raise RuntimeError("linalg.vander: x must have at least one dimension")
    n = x.shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("linalg.vander: N must be greater than 1.")
    columns = x.unsqueeze(-1).expand(*x.shape, n - 1)
    return _cat([columns.new_ones((*x.shape, 1)), columns], -1).cumprod(-1)


def tensorinv(A, ind=2, *, out=None):
    """The inverse of `A` for ``tensordot(.., ind)``: `A` read as a square matrix of its first
    `ind` dims by the rest; the result has shape ``A.shape[ind:] + A.shape[:ind]``.

    >>> import ember_tensor as torch
    >>> torch.linalg.tensorinv(torch.eye(4).reshape(4, 2, 2), ind=1).shape
    torch.Size([2, 2, 4])
    """
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows, cols = math.prod(A.shape[:ind]), math.prod(A.shape[ind:])
    if rows != cols:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    result = inv(A.reshape(rows, cols)).reshape(tuple(A.shape[ind:]) + tuple(A.shape[:ind]))
    return result if out is None else out.copy_(result)


def tensorsolve(A, B, dims=None, *, out=None):
    """X with ``tensordot(A, X, X.ndim) == B``: `A` read as a square matrix of its first
    ``B.ndim`` dims by the rest (after moving `dims`, if given, to the end).

    >>> import ember_tensor as torch
    >>> torch.linalg.tensorsolve(torch.eye(6).reshape(2, 3, 6), torch.ones(2, 3)).shape
    torch.Size([6])
    """
    if dims is not None:
        dims = [d % A.dim() for d in dims]
        A = A.permute(*[d for d in range(A.dim()) if d not in dims], *dims)
    rows, cols = math.prod(A.shape[:B.dim()]), math.prod(A.shape[B.dim():])
    if rows != cols:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                           f"prod(self.shape[:other.ndim]), but got {cols} != {rows}")
    result = solve(A.reshape(rows, cols), B.reshape(rows)).reshape(tuple(A.shape[B.dim():]))
    return result if out is None else out.copy_(result)


def cond(A, p=None):
    """The condition number of each matrix in norm `p` (default: 2, the ratio of extreme singular values)."""
    if p in (None, 2, -2):
        s = svdvals(A)
        return s[..., 0] / s[..., -1] if p != -2 else s[..., -1] / s[..., 0]
    return matrix_norm(A, p) * matrix_norm(inv(A), p)


def inv_ex(A, *, check_errors=False):
    """(inverse, info): like `inv`, with info = 0 (errors are raised, as with ``check_errors=True``)."""
    return _InvEx(inv(A), _zeros_info(A))


def cholesky_ex(A, *, upper=False, check_errors=False):
    """(L, info): like `cholesky`, with info = 0 (errors are raised, as with ``check_errors=True``)."""
    return _CholeskyEx(cholesky(A, upper=upper), _zeros_info(A))


def solve_ex(A, B, *, left=True, check_errors=False):
    """(result, info): like `solve`, with info = 0 (errors are raised)."""
    return _SolveEx(solve(A, B, left=left), _zeros_info(A))


def _zeros_info(A):
    return A.new_zeros(tuple(A.shape[:-2]), dtype=_dtype.int32)
