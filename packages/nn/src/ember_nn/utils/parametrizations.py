"""The parametrization forms of weight_norm and spectral_norm (``torch.nn.utils.parametrizations``)."""
import ember_autograd
import ember_tensor

from ..modules.module import Module
from . import parametrize
from ._norms import norm_except_dim, normalize, weight_as_matrix

__all__ = ["weight_norm", "spectral_norm"]


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
