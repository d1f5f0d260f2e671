"""PyTorch's older top-level names for linear algebra, which are also Tensor methods:
torch.inverse, det, logdet, slogdet, cholesky(upper=), cholesky_solve, qr(some=),
svd(some=, compute_uv=) returning V (not Vh), pinverse, lu, lu_solve, geqrf, orgqr and
ormqr. Each calls the `ember_tensor.linalg` op it stands for."""
from ... import return_types
from . import decompositions as decomp
from . import householder as householder_ops, lu as lu_ops

__all__ = ["inverse", "det", "logdet", "slogdet", "cholesky", "cholesky_solve", "cholesky_inverse", "qr", "svd",
           "pinverse", "lu", "lu_solve", "geqrf", "orgqr", "ormqr"]

SlogdetResult = return_types.structseq("slogdet", ("sign", "logabsdet"))
QRResult = return_types.structseq("qr", ("Q", "R"))
SVDResult = return_types.structseq("svd", ("U", "S", "V"))

logdet = decomp.logdet
cholesky_solve = decomp.cholesky_solve
cholesky_inverse = decomp.cholesky_inverse
geqrf = householder_ops.geqrf
ormqr = householder_ops.ormqr


def lu(A, pivot=True, get_infos=False, out=None):
    """(LU, pivots[, infos]) (``torch.lu``, deprecated by PyTorch for ``linalg.lu_factor``)."""
    return lu_ops.legacy_lu(A, pivot, get_infos, out)


def lu_solve(b, LU_data, LU_pivots, *, out=None):  # noqa: N803
    """X with ``A @ X = b`` from A's ``lu_factor`` (``torch.lu_solve``, deprecated by PyTorch)."""
    return lu_ops.legacy_lu_solve(b, LU_data, LU_pivots, out=out)


def orgqr(input, tau, *, out=None):
    """Q from geqrf's reflectors (``torch.orgqr``: ``linalg.householder_product``)."""
    return householder_ops.householder_product(input, tau, out=out)


def inverse(input, *, out=None):
    """The inverse of each square matrix (``torch.linalg.inv``)."""
    return decomp.inv(input, out=out)


def det(input):
    """The determinant of each square matrix (``torch.linalg.det``)."""
    return decomp.det(input)


def slogdet(input):
    """(sign, log|det|) of each square matrix (``torch.linalg.slogdet``)."""
    return SlogdetResult(*decomp.slogdet(input))


def cholesky(input, upper=False, *, out=None):
    """The Cholesky factor, lower or (``upper=True``) upper (``torch.linalg.cholesky``)."""
    return decomp.cholesky(input, upper=upper, out=out)


def qr(input, some=True):
    """Reduced (``some=True``) or complete QR factorization (``torch.linalg.qr``)."""
    return QRResult(*decomp.qr(input, "reduced" if some else "complete"))


def svd(input, some=True, compute_uv=True):
    """``input = U @ diag(S) @ V.mT`` (note V, not Vh); ``some=False`` gives square U and V.

    With ``compute_uv=False`` U and V are zero-filled, as in PyTorch.
    """
    if not compute_uv:
        S = decomp.svdvals(input)
        m, n = input.shape[-2:]
        batch = tuple(input.shape[:-2])
        return SVDResult(input.new_zeros(batch + (m, m)), S, input.new_zeros(batch + (n, n)))
    U, S, Vh = decomp.svd(input, full_matrices=not some)
    return SVDResult(U, S, Vh.mT)


def pinverse(input, rcond=1e-15):
    """The pseudo-inverse, dropping singular values below ``rcond * s_max``."""
    return decomp.pinv(input, rtol=rcond)
