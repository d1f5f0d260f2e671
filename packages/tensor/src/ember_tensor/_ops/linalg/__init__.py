"""The linear-algebra family of ops, one concept per file:

- `products`: matrix products (matmul, mm, bmm, addmm, ...), diag/trace, cross, kron,
  matrix_power and matrix_exp; BLAS on the CPU, cuBLAS on CUDA.
- `decompositions`: cholesky, qr, svd, eigh, solve, inv, det, lstsq, pinv, ...
- `lu`, `ldl`, `eig`, `householder`: the other factorizations and what uses them.
- `norms`: vector and matrix norms.
- `legacy`: PyTorch's deprecated top-level spellings (torch.lu, torch.geqrf, ...).
- `lapack`: their shared plumbing (host copies for the declared gaps, PyTorch's checks).

The products are the family's everyday ops, used by other families, so the package
exports them: ``from ember_tensor._ops import linalg; linalg.matmul(a, b)``.
"""
from .products import (
    addbmm, addmm, addmv, addr, baddbmm, bmm, cross, diag, diag_embed, dot, ger, inner,
    inner_product, kron, matmul, matrix_exp, matrix_power, mm, mv, outer, trace, vdot,
)

__all__ = [
    "addbmm", "addmm", "addmv", "addr", "baddbmm", "bmm", "cross", "diag", "diag_embed", "dot",
    "ger", "inner", "inner_product", "kron", "matmul", "matrix_exp", "matrix_power", "mm",
    "mv", "outer", "trace", "vdot",
]
