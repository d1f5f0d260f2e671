"""CPU linear algebra over NumPy arrays, one file per kind of factorization.

The same functions as `_backends.cuda.linalg` (inv, det, slogdet, solve,
solve_triangular, cholesky) plus those the CUDA backend lacks (`_families.GAPS`), which
the ops compute here, on host copies, for tensors of any device:

- `lapack`: what NumPy's batched LAPACK computes directly (qr, svd, eigh, pinv,
  matrix_rank, lstsq and the solvers above);
- `eig`: eigenvalues and eigenvectors of general matrices (LAPACK's geev through NumPy);
- `lu`: LU with partial pivoting in LAPACK's getrf conventions (NumPy exposes no getrf);
- `householder`: geqrf's compact QR (NumPy's ``qr(mode="raw")``);
- `ldl`: Bunch-Kaufman LDL^T in LAPACK's sytrf conventions, and its solve (NumPy has no
  sytrf).
"""
from .eig import eig, eigvals
from .householder import geqrf
from .lapack import (
    cholesky, det, eigh, inv, lstsq, matrix_rank, pinv, qr, slogdet, solve, solve_triangular, svd,
)
from .ldl import ldl_factor, ldl_solve
from .lu import lu_factor, lu_pivots_to_permutation

__all__ = ["inv", "det", "slogdet", "solve", "solve_triangular", "cholesky", "qr", "svd", "eigh", "pinv",
           "matrix_rank", "lstsq", "eig", "eigvals", "lu_factor", "lu_pivots_to_permutation", "geqrf",
           "ldl_factor", "ldl_solve"]
