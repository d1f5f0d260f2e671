"""Fused softmax and log_softmax along one dim (max-subtracted, so they never overflow).

Device-free: each op checks its argument's dtype with PyTorch's error, wraps `dim`, then
calls its device's backend (`_backends.<device>.softmax`: NumPy on the CPU, a row kernel
per block or a column per thread on CUDA) on the input in its compute dtype. Their
backward passes are short formulas in differentiable ops (in the autograd rules), so
only the forward passes need backends of their own.
"""
from ... import _backends
from ... import _dtype as D
from ..._dispatch import op
from ..._tensor import wrap_dim
from ._common import array_of, tensor_of

__all__ = ["softmax", "log_softmax"]


def _prepare(input, dim, dtype, name):
    if dtype is not None:
        input = input.to(dtype)
    if input._dtype.category != D._FLOAT:
        raise RuntimeError(f"\"{name}_lastdim_kernel_impl\" not implemented for "
                           f"'{ {'int64': 'Long', 'int32': 'Int', 'bool': 'Bool'}.get(input._dtype.name, input._dtype.name)}'")
    axis = wrap_dim(dim, max(input.dim(), 1)) if input.dim() else 0
    return input, axis


def _softmax(input, axis, log):
    y = _backends.get(input._device).softmax.softmax(array_of(input), axis, log)
    return tensor_of(y, input._dtype, input._device)


@op()
def softmax(input, dim, dtype=None):
    """exp(x) / exp(x).sum(dim): ``softmax(tensor([0., 0.]), 0)`` -> ``tensor([0.5, 0.5])``."""
    input, axis = _prepare(input, dim, dtype, "softmax")
    return _softmax(input, axis, False)


@op()
def log_softmax(input, dim, dtype=None):
    """x - logsumexp(x, dim), computed stably."""
    input, axis = _prepare(input, dim, dtype, "log_softmax")
    return _softmax(input, axis, True)
