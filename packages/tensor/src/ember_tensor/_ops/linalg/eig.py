"""Eigenvalues and eigenvectors of general square matrices: `linalg.eig` and
`linalg.eigvals`, complex results whatever the input's dtype (float32 gives complex64,
float64 complex128), as in PyTorch.

They have no device kernels (a declared gap, `_backends._families.GAPS`): they compute on
host copies with the CPU backend (LAPACK's geev through NumPy), and their results move
back to the tensor's device. eig's derivative lives in ember_autograd's
`_rules/linalg_factor.py`; eigvals is differentiated through eig, as in PyTorch.
"""
from ... import _dtype as D
from ... import return_types
from ..._dispatch import op
from .._iter import type_name
from .lapack import check_square, host, host_linalg, wrap

__all__ = ["eig", "eigvals"]

EigResult = return_types.structseq("linalg_eig", ("eigenvalues", "eigenvectors"))


def _check_eig_input(A, name):
    """PyTorch's checks, in its order: rank, dtype, then square."""
    if A.dim() < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if A._dtype.category in (D._BOOL, D._INT):
        raise RuntimeError(f"Unknown Complex ScalarType for {type_name(A._dtype)}")
    if A._dtype in (D.float16, D.bfloat16, D.complex32):
        raise NotImplementedError(f'"linalg_eig_out_cpu" not implemented for \'{type_name(A._dtype)}\'')
    check_square(A, name)


def _not_finite():
    return RuntimeError("torch.linalg.eig: input tensor should not contain infs or NaNs.")


@op("linalg_eig")
def eig(A, *, out=None):
    """(eigenvalues, eigenvectors) of each square matrix of `A`: ``A @ V == V @ diag(L)``.

    Both complex; the eigenvectors are the columns of V, each of unit norm (LAPACK's
    normalization, as PyTorch's), and are not unique: any one may be multiplied by a
    complex number of modulus 1.

    >>> import ember_tensor as torch
    >>> torch.linalg.eig(torch.tensor([[0., -1.], [1., 0.]])).eigenvalues
    tensor([0.+1.j, 0.-1.j])
    """
    _check_eig_input(A, "linalg.eig")
    result = host_linalg().eig(host(A))
    if result is None:
        raise _not_finite()
    complex_dtype = A._dtype.to_complex()
    values, vectors = (wrap(r, A, complex_dtype) for r in result)
    if out is not None:
        out[0].copy_(values)
        out[1].copy_(vectors)
        return EigResult(*out)
    return EigResult(values, vectors)


@op("linalg_eigvals")
def eigvals(A, *, out=None):
    """The eigenvalues of each square matrix of `A`, complex (``linalg.eig(A).eigenvalues``).

    >>> import ember_tensor as torch
    >>> torch.linalg.eigvals(torch.tensor([[2., 0.], [0., 3.]]))
    tensor([2.+0.j, 3.+0.j])
    """
    _check_eig_input(A, "linalg.eigvals")
    if A.requires_grad:
        # Differentiated through eig (eigvals' gradient needs the eigenvectors).
        values = eig(A).eigenvalues
    else:
        values = host_linalg().eigvals(host(A))
        if values is None:
            raise _not_finite()
        values = wrap(values, A, A._dtype.to_complex())
    return values if out is None else out.copy_(values)
