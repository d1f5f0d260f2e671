"""The parametrization forms of weight_norm, spectral_norm and orthogonal
(``torch.nn.utils.parametrizations``)."""
import math

import ember_autograd
import ember_tensor
import ember_tensor.linalg

from ..modules.module import Module
from . import parametrize
from ._norms import norm_except_dim, normalize, weight_as_matrix

__all__ = ["weight_norm", "spectral_norm", "orthogonal"]


class _WeightNorm(Module):
    """``weight = g * v / ||v||``; the originals are g (original0) and v (original1)."""

    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return weight_v * (weight_g / norm_except_dim(weight_v, self.dim))

    def right_inverse(self, weight):
        return norm_except_dim(weight, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """Weight normalisation as a parametrization: ``module.parametrizations.<name>``
    holds ``original0`` (g) and ``original1`` (v)."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


class _SpectralNorm(Module):
    """``weight / sigma(weight)`` with sigma from power iteration on buffers _u, _v."""

    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.dim()
        if dim >= ndim or dim < -ndim:
            raise IndexError("Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            matrix = weight_as_matrix(weight.detach(), self.dim)
            h, w = matrix.shape
            self.register_buffer("_u", normalize(matrix.new_empty(h).normal_(0, 1), eps))
            self.register_buffer("_v", normalize(matrix.new_empty(w).normal_(0, 1), eps))
            # Start u and v near the top singular vectors.
            self._power_method(matrix, 15)

    def _power_method(self, matrix, n_iterations):
        with ember_autograd.no_grad():
            for _ in range(n_iterations):
                self._u.copy_(normalize(ember_tensor.mv(matrix, self._v), self.eps))
                self._v.copy_(normalize(ember_tensor.mv(matrix.t(), self._u), self.eps))

    def forward(self, weight):
        if weight.dim() == 1:
            return weight / weight.norm().clamp(min=self.eps)  # a vector's spectral norm is its 2-norm
        matrix = weight_as_matrix(weight, self.dim)
        if self.training:
            self._power_method(matrix, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        sigma = ember_tensor.dot(u, ember_tensor.mv(matrix, v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Spectral normalisation as a parametrization of ``module.<name>``."""
    weight = getattr(module, name, None)
    if weight is None or not isinstance(weight, ember_tensor.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if type(module).__name__.startswith("ConvTranspose") else 0
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


def _matrix_exp(a):
    """exp(a) for a square matrix: scaling and squaring around a degree-12 Taylor
    polynomial, written with matmul so that autograd differentiates it."""
    n = a.size(-1)
    one_norm = float(a.detach().abs().sum(-2).amax()) if a.numel() else 0.0
    squarings = max(0, math.ceil(math.log2(one_norm)) + 1) if one_norm > 0.5 else 0
    x = a / (2 ** squarings)
    identity = ember_tensor.eye(n, dtype=a.dtype, device=a.device)
    result, term = identity + x, x
    for k in range(2, 13):
        term = (term @ x) / k
        result = result + term
    for _ in range(squarings):
        result = result @ result
    return result


def _householder_product(reflectors, tau):
    """H_1 H_2 ... H_k (first k columns) with H_i = I - tau_i v_i v_i^T, v_i = e_i + the
    strictly-lower part of column i (LAPACK's orgqr), from differentiable ops."""
    n, k = reflectors.size(-2), reflectors.size(-1)
    identity = ember_tensor.eye(n, dtype=reflectors.dtype, device=reflectors.device)
    q = identity
    for i in range(k):
        v = reflectors[..., :, i] + identity[:, i]
        q = q - tau[..., i] * ember_tensor.outer(q @ v, v)
    return q[..., :, :k]


def _make_orthogonal(a):
    """The Q of a's QR factorisation with signs fixed so that diag(R) > 0."""
    q, r = ember_tensor.linalg.qr(a)
    return q * r.diagonal(dim1=-2, dim2=-1).sign().unsqueeze(-2)


def _is_orthogonal(q):
    n, k = q.size(-2), q.size(-1)
    eps = 10 * n * (1.2e-7 if q.dtype == ember_tensor.float32 else 2.3e-16)
    identity = ember_tensor.eye(k, dtype=q.dtype, device=q.device)
    return bool(((q.mT @ q) - identity).abs().amax() <= eps)


class _Orthogonal(Module):
    """An orthogonal (semi-orthogonal if not square) matrix from unconstrained parameters."""

    MAPS = ("matrix_exp", "cayley", "householder")

    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, x):
        n, k = x.size(-2), x.size(-1)
        transposed = n < k
        if transposed:
            x = x.mT
            n, k = k, n
        if self.orthogonal_map in ("matrix_exp", "cayley"):
            x = x.tril()
            if n != k:  # embed the tall matrix into a square one
                x = ember_tensor.cat([x, x.new_zeros(n, n - k)], dim=-1)
            a = x - x.mT  # skew-symmetric
            if self.orthogonal_map == "matrix_exp":
                q = _matrix_exp(a)
            else:  # the Cayley retraction (I - A/2)^{-1} (I + A/2)
                identity = ember_tensor.eye(n, dtype=a.dtype, device=a.device)
                q = ember_tensor.linalg.solve(identity - a * 0.5, identity + a * 0.5)
            if n != k:
                q = q[..., :k]
        else:
            reflectors = x.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (reflectors * reflectors).sum(dim=-2))
            q = _householder_product(reflectors, tau)
            # The signs of the diagonal of x choose the sign of each column.
            q = q * x.diagonal(dim1=-2, dim2=-1).sign().unsqueeze(-2)
        if getattr(self, "base", None) is not None:
            q = self.base @ q
        return q.mT if transposed else q

    def right_inverse(self, q):
        """With a trivialization: store q (completed and orthogonalised) as `base`, return
        the parameters for which forward gives the identity."""
        if tuple(q.shape) != tuple(self.shape):
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. Got a tensor of "
                             f"shape {q.shape}.")
        with ember_autograd.no_grad():
            q_init = q
            n, k = q.size(-2), q.size(-1)
            if n < k:
                q = q.mT
                n, k = k, n
            if "base" not in self._buffers:
                if self.orthogonal_map != "householder":
                    raise NotImplementedError("It is not possible to assign to the matrix exponential or the "
                                              "Cayley parametrizations when use_trivialization=False.")
                # PyTorch stores geqrf's reflectors here; ember has no geqrf yet.
                raise NotImplementedError("assigning to orthogonal(..., orthogonal_map='householder', "
                                          "use_trivialization=False) is not supported by ember yet; keep the "
                                          "default use_trivialization=True")
            if n == k:
                q = q.clone() if _is_orthogonal(q) else _make_orthogonal(q)
            else:  # complete q into an n x n orthogonal matrix
                q = _make_orthogonal(ember_tensor.cat([q, q.new_empty(n, n - k).normal_()], dim=-1))
            self.base = q
            # -I: the parameters whose image is the identity (householder's diagonal gives the signs).
            minus_identity = ember_tensor.zeros_like(q_init)
            minus_identity.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
            return minus_identity



def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Constrain ``module.<name>`` (a matrix, or a batch of them) to be orthogonal, or
    semi-orthogonal when not square: its rows or columns stay orthonormal through training.

    `orthogonal_map` is "matrix_exp" (default for square matrices), "cayley" or
    "householder" (default otherwise).

    >>> import ember_tensor as torch, ember_nn as nn
    >>> m = orthogonal(nn.Linear(4, 3))
    >>> w = m.weight
    >>> bool(((w @ w.T) - torch.eye(3)).abs().max() < 1e-5)
    True
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, ember_tensor.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.dim() < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.dim()} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.size(-2) == weight.size(-1) else "householder"
    if orthogonal_map not in _Orthogonal.MAPS:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    parametrization = _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, parametrization, unsafe=True)
    return module
