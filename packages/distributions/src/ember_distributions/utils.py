"""Helpers shared by the distributions (``torch.distributions.utils``)."""
from functools import update_wrapper
from numbers import Number

import numpy as np
import ember_autograd
import ember_tensor as torch

__all__ = ["is_tensor_like", "broadcast_all", "logits_to_probs", "probs_to_logits", "clamp_probs", "lazy_property",
           "tril_matrix_to_vec", "vec_to_tril_matrix", "euler_constant", "finfo"]

euler_constant = 0.57721566490153286060  # Euler-Mascheroni constant

_NUMPY_FLOATS = {"float16": np.float16, "float32": np.float32, "float64": np.float64}


class finfo:
    """``torch.finfo`` for ember's floating dtypes (ember_tensor has no finfo yet).

    >>> finfo(torch.float32).eps
    1.1920928955078125e-07
    """

    def __init__(self, dtype):
        name = str(dtype).replace("torch.", "")
        if name == "bfloat16":
            self.eps, self.tiny, self.max = 0.0078125, 1.1754943508222875e-38, 3.3895313892515355e38
        else:
            info = np.finfo(_NUMPY_FLOATS[name])
            self.eps, self.tiny, self.max = float(info.eps), float(info.tiny), float(info.max)
        self.min = -self.max


def is_tensor_like(value):
    """Whether ``value`` is a Tensor or an object implementing ``__torch_function__``."""
    return isinstance(value, torch.Tensor) or hasattr(value, "__torch_function__")


def broadcast_all(*values):
    """Broadcast tensors and numbers to one shape; numbers take the tensors' dtype and device.

    Raises ValueError as PyTorch does when an argument is neither a Tensor nor a Number.

    >>> a, b = broadcast_all(torch.tensor([1.0, 2.0]), 3.0)
    >>> b
    tensor([3., 3.])
    """
    if not all(torch.is_tensor(v) or isinstance(v, Number) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number, torch.Tensor or objects "
                         "implementing __torch_function__.")
    if not all(torch.is_tensor(v) for v in values):
        options = dict(dtype=torch.get_default_dtype())
        for value in values:
            if torch.is_tensor(value):
                options = dict(dtype=value.dtype, device=value.device)
                break
        values = [v if torch.is_tensor(v) else torch.tensor(v, **options) for v in values]
    return torch.broadcast_tensors(*values)


def _standard_normal(shape, dtype, device):
    """N(0, 1) draws from ember's default generator."""
    return torch.randn(shape, dtype=dtype, device=device)


def _sum_rightmost(value, dim):
    """Sum out the ``dim`` rightmost dimensions of ``value``."""
    if dim == 0:
        return value
    return value.reshape(value.shape[:-dim] + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary=False):
    """Probabilities from logits: sigmoid for binary, softmax over the last dim otherwise."""
    if is_binary:
        return torch.sigmoid(logits)
    return torch.softmax(logits, dim=-1)


def clamp_probs(probs):
    """Clamp probabilities into the open interval (eps, 1 - eps) of their dtype."""
    eps = finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    """Logits from probabilities: log-odds for binary, log-probabilities otherwise."""
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return torch.log(ps_clamped) - torch.log1p(-ps_clamped)
    return torch.log(ps_clamped)


def softplus(x):
    """log(1 + exp(x)) without overflow (ember_tensor has no softplus op)."""
    return x.clamp(min=0) + torch.log1p(torch.exp(-x.abs()))


def xlogy(x, y):
    """x * log(y), 0 where x == 0 (ember_tensor has no xlogy op)."""
    return torch.where(x == 0, torch.zeros_like(y * x), x * torch.log(y))


class lazy_property:
    """A property computed once per instance, on first access, then stored as an attribute.

    Distributions keep both ``probs`` and ``logits`` this way: whichever one was given is
    stored, the other is derived only if asked for.
    """

    def __init__(self, wrapped):
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        # Derived parameters keep their graph even when first read under no_grad.
        with ember_autograd.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    """What a lazy_property looks like on the class: a property, for introspection."""

    def __init__(self, wrapped):
        property.__init__(self, wrapped)


def tril_matrix_to_vec(mat, diag=0):
    """The lower triangle (offset ``diag``) of the last two dims, flattened row by row."""
    n = mat.shape[-1]
    if not -n <= diag < n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    rows, cols = np.tril_indices(n, k=diag)
    return mat[..., torch.tensor(rows, device=mat.device), torch.tensor(cols, device=mat.device)]


def vec_to_tril_matrix(vec, diag=0):
    """The inverse of tril_matrix_to_vec: a vector of length n(n+1)/2 (for diag=0) to a matrix."""
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    eps = finfo(vec.dtype).eps
    if not round(n) - n < eps:
        raise ValueError(f"The size of last dimension is {vec.shape[-1]} which cannot be expressed as "
                         "the lower triangular part of a square D x D matrix.")
    n = round(n.item()) if isinstance(n, torch.Tensor) else round(n)
    mat = vec.new_zeros(vec.shape[:-1] + (n, n))
    rows, cols = np.tril_indices(n, k=diag)
    mat[..., torch.tensor(rows, device=vec.device), torch.tensor(cols, device=vec.device)] = vec
    return mat
