"""spectral_norm / remove_spectral_norm: the hook-based spectral normalisation of PyTorch.

The weight is divided by its largest singular value, estimated by power iteration with
vectors ``<name>_u`` and ``<name>_v`` kept as buffers (one iteration per training forward).
"""
import ember_autograd
import ember_tensor

from ..parameter import Parameter
from ._norms import normalize, weight_as_matrix

__all__ = ["SpectralNorm", "spectral_norm", "remove_spectral_norm"]


class SpectralNorm:
    """The forward pre-hook that recomputes ``weight = weight_orig / sigma``."""

    def __init__(self, name="weight", n_power_iterations=1, dim=0, eps=1e-12):
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.name = name
        self.dim = dim
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def compute_weight(self, module, do_power_iteration):
        """The normalised weight; `do_power_iteration` refines u and v in place first."""
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        matrix = weight_as_matrix(weight, self.dim)
        if do_power_iteration:
            with ember_autograd.no_grad():
                for _ in range(self.n_power_iterations):
                    v.copy_(normalize(ember_tensor.mv(matrix.t(), u), self.eps))
                    u.copy_(normalize(ember_tensor.mv(matrix, v), self.eps))
            # Clones, so that autograd does not see the in-place updates of the buffers.
            u, v = u.clone(), v.clone()
        sigma = ember_tensor.dot(u, ember_tensor.mv(matrix, v))
        return weight / sigma

    def remove(self, module):
        """Turn the normalised weight back into one Parameter."""
        with ember_autograd.no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))

    @staticmethod
    def apply(module, name, n_power_iterations, dim, eps):
        """Move `name` to `<name>_orig`, create u and v, register the hook."""
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two spectral_norm hooks on the same parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        with ember_autograd.no_grad():
            matrix = weight_as_matrix(weight, dim)
            h, w = matrix.shape
            u = normalize(weight.new_empty(h).normal_(0, 1), eps)
            v = normalize(weight.new_empty(w).normal_(0, 1), eps)
        delattr(module, name)
        module.register_parameter(name + "_orig", weight)
        # A plain attribute (not a parameter) so that it is recomputed by the hook.
        setattr(module, name, weight.detach())
        module.register_buffer(name + "_u", u)
        module.register_buffer(name + "_v", v)
        module.register_forward_pre_hook(fn)
        return fn


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Divide ``module.<name>`` by its spectral norm before every forward; returns the
    module. `dim` defaults to 1 for transposed convolutions, 0 otherwise."""
    if dim is None:
        transposed = type(module).__name__.startswith("ConvTranspose")
        dim = 1 if transposed else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module, name="weight"):
    """Undo ``spectral_norm``; returns the module."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"spectral_norm of '{name}' not found in {module}")
