"""LDL^T factorization of symmetric (LDL^H of Hermitian) matrices with Bunch-Kaufman
pivoting: `linalg.ldl_factor`, `ldl_factor_ex` and `ldl_solve`, in LAPACK's sytrf/hetrf
conventions for the lower triangle, as PyTorch's (compact LD, 1-based int32 pivots,
negative for the two rows of a 2 x 2 block of D).

They run on host copies with the CPU backend (`_backends/cpu/linalg/ldl.py`: NumPy has
no sytrf, so the unblocked algorithm is written there; a declared gap on CUDA) and are
not differentiable, as in PyTorch.
"""
from ... import _dtype as D
from ... import return_types
from ..._dispatch import op
from .._iter import type_name
from .lapack import LinAlgError, batch_prefix, check_square, host, host_linalg, wrap

__all__ = ["ldl_factor", "ldl_factor_ex", "ldl_solve"]

LDLFactorResult = return_types.structseq("linalg_ldl_factor", ("LD", "pivots"))
LDLFactorExResult = return_types.structseq("linalg_ldl_factor_ex", ("LD", "pivots", "info"))


def _copy_out(result, out, result_type):
    for target, value in zip(out, result):
        target.copy_(value)
    return result_type(*out)


@op("linalg_ldl_factor_ex")
def ldl_factor_ex(A, *, hermitian=False, check_errors=False, out=None):
    """(LD, pivots, info) of each symmetric (Hermitian when `hermitian`) matrix of `A`,
    reading its lower triangle: ``A = P L D L^T P^T`` in LAPACK's compact form; info
    (int32, per matrix) is the 1-based index of the first zero block of D, or 0.

    >>> import ember_tensor as torch
    >>> LD, pivots, info = torch.linalg.ldl_factor_ex(torch.tensor([[4., 2.], [2., 3.]]))
    >>> LD
    tensor([[4.0000, 0.0000],
            [0.5000, 2.0000]])
    """
    check_square(A, "torch.linalg.ldl_factor_ex")
    LD, pivots, info = host_linalg().ldl_factor(host(A), bool(hermitian))
    if check_errors:
        _raise_on_singular(info, tuple(A.shape[:-2]), "torch.linalg.ldl_factor_ex")
    result = LDLFactorExResult(wrap(LD, A), wrap(pivots, A, D.int32), wrap(info, A, D.int32))
    return result if out is None else _copy_out(result, out, LDLFactorExResult)


def _raise_on_singular(info, batch_shape, name):
    # PyTorch has no message for sytrf's info > 0 (it fails an internal assert); this one
    # says what happened.
    failing = info.reshape(-1).nonzero()[0]
    if failing.size:
        index = int(failing[0])
        position = int(info.reshape(-1)[index])
        raise LinAlgError(f"{name}: {batch_prefix(index, batch_shape)}The factorization could not be completed "
                          f"because the block diagonal matrix D is singular (D[{position},{position}] is zero).")


@op("linalg_ldl_factor")
def ldl_factor(A, *, hermitian=False, out=None):
    """(LD, pivots): `ldl_factor_ex` that raises LinAlgError when D is singular.

    >>> import ember_tensor as torch
    >>> torch.linalg.ldl_factor(torch.tensor([[4., 2.], [2., 3.]])).pivots
    tensor([1, 2], dtype=torch.int32)
    """
    LD, pivots, info = ldl_factor_ex(A, hermitian=hermitian)
    _raise_on_singular(host(info), tuple(A.shape[:-2]), "torch.linalg.ldl_factor")
    result = LDLFactorResult(LD, pivots)
    return result if out is None else _copy_out(result, out, LDLFactorResult)


@op("linalg_ldl_solve")
def ldl_solve(LD, pivots, B, *, hermitian=False, out=None):  # noqa: N803
    """X with ``A @ X = B`` from `ldl_factor`'s (LD, pivots) of A, batches broadcast.

    >>> import ember_tensor as torch
    >>> A = torch.tensor([[4., 2.], [2., 3.]])
    >>> torch.linalg.ldl_solve(*torch.linalg.ldl_factor(A), torch.tensor([[6.], [5.]]))
    tensor([[1.],
            [1.]])
    """
    check_square(LD, "torch.linalg.ldl_solve", "LD")
    if B.dim() < 2:
        raise RuntimeError("torch.linalg.ldl_solve: The input tensor B must have at least 2 dimensions.")
    if B._dtype is not LD._dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type {type_name(B._dtype)} "
                           f"and A of type {type_name(LD._dtype)} instead.")
    n = LD.shape[-1]
    if B.shape[-2] != n:
        raise RuntimeError(f"Incompatible matrix sizes for torch.linalg.ldl_solve: each A matrix is {n} by {n} but "
                           f"each b matrix is {B.shape[-2]} by {B.shape[-1]}")
    if pivots._dtype.category != D._INT:
        raise RuntimeError(f"torch.linalg.ldl_solve: Expected pivots to be integers. Got {type_name(pivots._dtype)}")
    x = host_linalg().ldl_solve(host(LD), host(pivots), host(B), bool(hermitian))
    result = wrap(x, LD)
    return result if out is None else out.copy_(result)
