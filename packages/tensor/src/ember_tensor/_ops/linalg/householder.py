"""QR in Householder form: `geqrf` (LAPACK's compact factorization: R on and above the
diagonal, the reflectors' vectors below it, their scales tau) and the products of its
reflectors, `linalg.householder_product` (alias `orgqr`: the first n columns of
Q = H_1 ... H_k, H_i = I - tau_i v_i v_i^H) and `ormqr` (Q or Q^H times a matrix).

geqrf runs on host copies with the CPU backend (NumPy's ``qr(mode="raw")``, a declared
gap on CUDA); the products are composed of differentiable ops, one rank-1 update per
reflector, so their gradients (in A, tau and the other operand) come through autograd.
"""
from ... import return_types
from ..._dispatch import op
from .._iter import type_name
from .lapack import check_matrix, host, host_linalg, wrap
from ..creation import eye

__all__ = ["geqrf", "householder_product", "orgqr", "ormqr"]

GeqrfResult = return_types.structseq("geqrf", ("a", "tau"))


@op("geqrf")
def geqrf(input, *, out=None):
    """(a, tau): LAPACK's compact QR of each m x n matrix of `input` (not differentiable,
    as in PyTorch). ``householder_product(a, tau)`` rebuilds Q, ``a.triu()`` is R.

    >>> import ember_tensor as torch
    >>> a, tau = torch.geqrf(torch.tensor([[3., 1.], [4., 2.]]))
    >>> a.triu().abs()
    tensor([[5.0000, 2.2000],
            [0.0000, 0.4000]])
    """
    check_matrix(input, "torch.geqrf", "input")
    a, tau = host_linalg().geqrf(host(input))
    result = GeqrfResult(wrap(a, input), wrap(tau, input))
    if out is not None:
        for target, value in zip(out, result):
            target.copy_(value)
        return GeqrfResult(*out)
    return result


def _check_reflectors(A, tau, name):
    """PyTorch's checks of householder_product / ormqr's (A, tau)."""
    check_matrix(A, name, "input")
    if A.shape[-2] < A.shape[-1] and name.endswith("householder_product"):
        raise RuntimeError(f"{name}: input.shape[-2] must be greater than or equal to input.shape[-1]")
    if A.shape[-1] < tau.shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-1] must be greater than or equal to tau.shape[-1]")
    if tau.dim() != A.dim() - 1 or tuple(tau.shape[:-1]) != tuple(A.shape[:-2]):
        raise RuntimeError(f"{name}: Expected batch dimensions of tau to be equal to input.shape[:-2], but got "
                           f"{list(tau.shape[:-1])}")
    if tau._dtype is not A._dtype:
        raise RuntimeError(f"{name}: tau dtype {type_name(tau._dtype)} does not match input dtype "
                           f"{type_name(A._dtype)}")


def _reflector_product(A, tau, *, adjoint=False):
    """The full m x m product Q = H_1 ... H_k of the reflectors stored in A and tau
    (Q^H = H_k^H ... H_1^H when `adjoint`), built by k rank-1 updates."""
    m = A.shape[-2]
    Q = eye(m, dtype=A._dtype, device=A.device).expand(*A.shape[:-2], m, m)
    # v_i: a one at row i, A's column i below it, zeros above.
    unit = eye(m, A.shape[-1], dtype=A._dtype, device=A.device)
    V = A.tril(-1) + unit
    for i in range(tau.shape[-1]):
        v = V[..., :, i:i + 1]
        t = tau[..., i:i + 1].unsqueeze(-1)
        if adjoint:   # Q^H <- H_i^H Q^H = Q^H - conj(tau_i) v (v^H Q^H)
            Q = Q - (t.conj() * v) @ (v.mH @ Q)
        else:         # Q <- Q H_i = Q - tau_i (Q v) v^H
            Q = Q - (Q @ v) @ (t * v.mH)
    return Q


@op("linalg_householder_product")
def householder_product(A, tau, *, out=None):
    """The first n columns of the product of the Householder reflectors
    H_i = I - tau_i v_i v_i^H that `A` (m x n, m >= n; v_i below its diagonal) and `tau`
    hold, as `geqrf` returns them: its orthonormal Q.

    >>> import ember_tensor as torch
    >>> A = torch.tensor([[3., 1.], [4., 2.], [0., 1.]])
    >>> Q = torch.linalg.householder_product(*torch.geqrf(A))
    >>> torch.allclose(Q.mT @ Q, torch.eye(2), atol=1e-6)
    True
    """
    _check_reflectors(A, tau, "torch.linalg.householder_product")
    Q = _reflector_product(A, tau)[..., :, :A.shape[-1]]
    return Q if out is None else out.copy_(Q)


def orgqr(input, tau, *, out=None):
    """``torch.orgqr``: `linalg.householder_product` (LAPACK's name for it)."""
    return householder_product(input, tau, out=out)


@op("ormqr")
def ormqr(input, tau, other, left=True, transpose=False, *, out=None):
    """Q @ other (``other @ Q`` when not `left`; Q^H in place of Q when `transpose`),
    with Q the full m x m product of the reflectors in (`input`, `tau`), as from geqrf.
    """
    _check_reflectors(input, tau, "torch.ormqr")
    if other.dim() < 2:
        raise RuntimeError("torch.ormqr: other must have at least 2 dimensions.")
    if other._dtype is not input._dtype:
        raise RuntimeError(f"torch.ormqr: Expected input and other to have the same dtype, but input has dtype "
                           f"{type_name(input._dtype)} and other has dtype {type_name(other._dtype)}")
    m = input.shape[-2]
    if (other.shape[-2] if left else other.shape[-1]) != m:
        dim = -2 if left else -1
        raise RuntimeError(f"torch.ormqr: other.shape[{dim}] must be equal to input.shape[-2]")
    Q = _reflector_product(input, tau, adjoint=transpose)
    result = Q @ other if left else other @ Q
    return result if out is None else out.copy_(result)
