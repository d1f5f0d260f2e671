"""LU factorization with partial pivoting, ``A = P @ L @ U``, and what is built on it:
`linalg.lu_factor` / `lu_factor_ex` (the compact form: L's multipliers below the
diagonal, U on and above it, 1-based int32 pivots as LAPACK's getrf gives them),
`linalg.lu` (P, L, U), `lu_unpack`, `linalg.lu_solve`, and PyTorch's older `torch.lu`
and `torch.lu_solve`.

The factorization has no device kernel exposed as an op (a declared gap,
`_backends._families.GAPS`): it runs on host copies with the CPU backend and its results
move back to the tensor's device. Everything else is composed of differentiable ops
(triangle masks, triangular solves, products with P), so only `linalg_lu_factor_ex` needs
a derivative rule (ember_autograd's `_rules/linalg_factor.py`, PyTorch's formula).
"""
import warnings

from ... import _dtype as D
from ... import return_types
from ..._dispatch import op
from .._iter import broadcast_shapes, type_name
from .lapack import LinAlgError, batch_prefix, check_matrix, host, host_linalg, wrap
from ..creation import empty, eye
from ..index_ops import take_along_dim
from .decompositions import solve_triangular

__all__ = ["lu_factor", "lu_factor_ex", "lu", "lu_unpack", "lu_solve", "legacy_lu", "legacy_lu_solve"]

LUFactorResult = return_types.structseq("linalg_lu_factor", ("LU", "pivots"))
LUFactorExResult = return_types.structseq("linalg_lu_factor_ex", ("LU", "pivots", "info"))
LUResult = return_types.structseq("linalg_lu", ("P", "L", "U"))
LUUnpackResult = return_types.structseq("lu_unpack", ("P", "L", "U"))
LUWithInfoResult = return_types.structseq("_lu_with_info", ("LU", "pivots", "info"))


def _check_lu_input(A, name):
    if A.dim() < 2:
        raise RuntimeError(f"{name}: Expected tensor with 2 or more dimensions. Got size: {list(A.shape)} instead")
    if A._dtype.category in (D._BOOL, D._INT) or A._dtype in (D.float16, D.bfloat16, D.complex32):
        raise NotImplementedError(f'"lu_cpu" not implemented for \'{type_name(A._dtype)}\'')


def _check_pivot(pivot):
    # PyTorch computes LU without pivoting on CUDA only; ember factors on the host.
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")


@op("linalg_lu_factor_ex")
def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    """(LU, pivots, info) of each m x n matrix of `A`: the compact LU factorization, its
    1-based int32 pivots, and info (int32, per matrix): the 1-based index of the first
    zero on U's diagonal, or 0. Raises on such a zero only with ``check_errors=True``.

    >>> import ember_tensor as torch
    >>> torch.linalg.lu_factor_ex(torch.tensor([[1., 2.], [3., 4.]])).pivots
    tensor([2, 2], dtype=torch.int32)
    """
    _check_lu_input(A, "torch.lu_factor")
    _check_pivot(pivot)
    lu_array, pivots, info = host_linalg().lu_factor(host(A))
    if check_errors:
        _raise_on_zero_pivot(info, tuple(A.shape[:-2]), "torch.linalg.lu_factor_ex")
    result = LUFactorExResult(wrap(lu_array, A), wrap(pivots, A, D.int32), wrap(info, A, D.int32))
    return result if out is None else _copy_out(result, out, LUFactorExResult)


def _raise_on_zero_pivot(info, batch_shape, name):
    failing = info.reshape(-1).nonzero()[0]
    if failing.size:
        index = int(failing[0])
        position = int(info.reshape(-1)[index])
        raise LinAlgError(
            f"{name}: {batch_prefix(index, batch_shape)}U[{position},{position}] is zero and using it on lu_solve "
            "would result in a division by zero. If you still want to perform the factorization, consider "
            "calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")


def _copy_out(result, out, result_type):
    for target, value in zip(out, result):
        target.copy_(value)
    return result_type(*out)


@op("linalg_lu_factor")
def lu_factor(A, *, pivot=True, out=None):
    """(LU, pivots): the compact LU factorization of each matrix of `A` (see
    `lu_factor_ex`); raises LinAlgError when U has a zero on its diagonal.

    >>> import ember_tensor as torch
    >>> LU, pivots = torch.linalg.lu_factor(torch.tensor([[1., 2.], [3., 4.]]))
    >>> LU
    tensor([[3.0000, 4.0000],
            [0.3333, 0.6667]])
    """
    _check_lu_input(A, "torch.lu_factor")
    _check_pivot(pivot)
    LU, pivots, info = lu_factor_ex(A, pivot=pivot)
    _raise_on_zero_pivot(host(info), tuple(A.shape[:-2]), "torch.linalg.lu_factor")
    result = LUFactorResult(LU, pivots)
    return result if out is None else _copy_out(result, out, LUFactorResult)


@op("lu_unpack")
def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):  # noqa: N803
    """(P, L, U) from `lu_factor`'s compact result: ``A == P @ L @ U`` with P an m x m
    permutation matrix, L m x k unit lower triangular and U k x n upper triangular
    (k = min(m, n)). Parts not asked for (`unpack_data`, `unpack_pivots`) come back empty.
    """
    if LU_pivots._dtype is not D.int32:
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype. "
                           "Note: this function is intended to be used with the output produced by "
                           "torch.linalg.lu_factor")
    m, n = LU_data.shape[-2:]
    k = min(m, n)
    if unpack_data:
        unit = eye(m, k, dtype=LU_data._dtype, device=LU_data.device)
        L = LU_data[..., :, :k].tril(-1) + unit
        U = LU_data[..., :k, :].triu()
    else:
        L = U = empty((0,), dtype=LU_data._dtype, device=LU_data.device)
    if unpack_pivots:
        P = host_linalg().lu_pivots_to_permutation(host(LU_pivots), m, LU_data._dtype.np)
        if P is None:
            raise RuntimeError("torch.lu_unpack: pivots must be in the range [1, LU_data.size(-2)]")
        P = wrap(P, LU_data)
    else:
        P = empty((0,), dtype=LU_data._dtype, device=LU_data.device)
    result = LUUnpackResult(P, L, U)
    return result if out is None else _copy_out(result, out, LUUnpackResult)


@op("linalg_lu")
def lu(A, *, pivot=True, out=None):
    """(P, L, U) with ``A == P @ L @ U`` for each m x n matrix of `A` (see `lu_unpack`);
    singular matrices are factored without an error, as in PyTorch.

    >>> import ember_tensor as torch
    >>> A = torch.tensor([[1., 2.], [3., 4.]])
    >>> P, L, U = torch.linalg.lu(A)
    >>> torch.allclose(P @ L @ U, A)
    True
    """
    _check_lu_input(A, "linalg.lu")
    _check_pivot(pivot)
    LU, pivots, _ = lu_factor_ex(A, pivot=pivot)
    P, L, U = lu_unpack(LU, pivots)
    result = LUResult(P, L, U)
    return result if out is None else _copy_out(result, out, LUResult)


@op("linalg_lu_solve")
def lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):  # noqa: N803
    """X with ``A @ X = B`` (``X @ A = B`` when not `left`; A^H in place of A when
    `adjoint`) from `lu_factor`'s (LU, pivots) of A, batches broadcast.

    >>> import ember_tensor as torch
    >>> A = torch.tensor([[1., 2.], [3., 4.]])
    >>> torch.linalg.lu_solve(*torch.linalg.lu_factor(A), torch.tensor([[5.], [6.]]))
    tensor([[-4.0000],
            [ 4.5000]])
    """
    check_matrix(LU, "linalg.lu_solve", "LU")
    if B.dim() < 2:
        raise RuntimeError("linalg.lu_solve: The input tensor B must have at least 2 dimensions.")
    if LU._dtype is not B._dtype:
        raise RuntimeError(f"linalg.lu_solve: Expected LU and B to have the same dtype, but found LU of type "
                           f"{type_name(LU._dtype)} and B of type {type_name(B._dtype)} instead")
    n = LU.shape[-1]
    if LU.shape[-2] != n:
        raise RuntimeError(f"linalg.lu_solve: A must be batches of square matrices, but they are "
                           f"{LU.shape[-2]} by {n} matrices")
    rows = B.shape[-2] if left else B.shape[-1]
    if rows != n:
        equation = "AX = B" if left else "XA = B"
        raise RuntimeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation {equation} "
                           f"({n}x{n} and {B.shape[-2]}x{B.shape[-1]})")
    P, L, U = lu_unpack(LU, pivots)
    X = _solve_with_factors(P, L, U, B, left, adjoint)
    return X if out is None else out.copy_(X)


def _solve_with_factors(P, L, U, B, left, adjoint):
    """A = P L U: X = A^-1 B, A^-H B, B A^-1 or B A^-H by two triangular solves and a
    permutation (all differentiable, so gradients reach LU and B). As LAPACK's getrs, a
    zero on U's diagonal is divided by (inf and nan), never checked."""
    if left and not adjoint:    # U^-1 L^-1 P^T B
        Y = solve_triangular(L, _permute(P, B, rows=True, transpose=True), upper=False, unitriangular=True)
        return solve_triangular(U, Y, upper=True)
    if left:                    # P L^-H U^-H B
        Y = solve_triangular(U.mH, B, upper=False)
        return _permute(P, solve_triangular(L.mH, Y, upper=True, unitriangular=True), rows=True, transpose=False)
    if not adjoint:             # B U^-1 L^-1 P^T
        Y = solve_triangular(U, B, upper=True, left=False)
        return _permute(P, solve_triangular(L, Y, upper=False, left=False, unitriangular=True), rows=False,
                        transpose=True)
    Y = solve_triangular(L.mH, _permute(P, B, rows=False, transpose=False), upper=True, left=False,
                         unitriangular=True)  # B P L^-H U^-H
    return solve_triangular(U.mH, Y, upper=False, left=False)


def _permute(P, X, rows, transpose):
    """P @ X, P^T @ X (`rows`), X @ P or X @ P^T as a gather of X's rows or columns: a
    permutation moves values, where a product with P would turn an inf of X into nan
    (0 * inf) as getrs's row swaps never do."""
    if P.shape[-1] == 0 or X.is_complex():
        # The product for complex matrices: the gather kernels move at most 8-byte items.
        P = P.mT if transpose else P
        return P @ X if rows else X @ P
    # (P X)[r] = X[i] and (X P^T)[:, r] = X[:, i] where P[r, i] = 1: the column of row r's
    # one; P^T X and X P take the row of column r's one.
    index = P.argmax(-2 if transpose == rows else -1)
    batch = broadcast_shapes(tuple(P.shape[:-2]), tuple(X.shape[:-2]))
    X = X.expand(batch + tuple(X.shape[-2:]))
    index = index.expand(batch + tuple(index.shape[-1:]))
    if rows:
        return take_along_dim(X, index.unsqueeze(-1), dim=-2)
    return take_along_dim(X, index.unsqueeze(-2), dim=-1)


_LU_DEPRECATED = (
    "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and will be removed in "
    "a future PyTorch release.\nLU, pivots = torch.lu(A, compute_pivots)\nshould be replaced with\n"
    "LU, pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\n"
    "LU, pivots, info = torch.lu(A, compute_pivots, get_infos=True)\nshould be replaced with\n"
    "LU, pivots, info = torch.linalg.lu_factor_ex(A, compute_pivots)")


def legacy_lu(A, pivot=True, get_infos=False, out=None):
    """``torch.lu``: (LU, pivots), or (LU, pivots, infos) with `get_infos` (which also
    keeps singular matrices from raising). Deprecated by PyTorch for `linalg.lu_factor`."""
    warnings.warn(_LU_DEPRECATED, UserWarning, stacklevel=3)
    LU, pivots, info = lu_factor_ex(A, pivot=pivot, check_errors=not get_infos)
    result = LUWithInfoResult(LU, pivots, info) if get_infos else (LU, pivots)
    if out is not None:
        for target, value in zip(out, result):
            target.copy_(value)
        return out
    return result


_LU_SOLVE_DEPRECATED = (
    "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a future PyTorch "
    "release.\nNote that torch.linalg.lu_solve has its arguments reversed.\nX = torch.lu_solve(B, LU, pivots)\n"
    "should be replaced with\nX = torch.linalg.lu_solve(LU, pivots, B)")


def legacy_lu_solve(b, LU_data, LU_pivots, *, out=None):  # noqa: N803
    """``torch.lu_solve(b, LU_data, LU_pivots)``: ``linalg.lu_solve(LU_data, LU_pivots, b)``
    (deprecated by PyTorch, which warns; its missing space is PyTorch's)."""
    warnings.warn(_LU_SOLVE_DEPRECATED, UserWarning, stacklevel=3)
    return lu_solve(LU_data, LU_pivots, b, out=out)
