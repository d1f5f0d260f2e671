"""Fused softmax and log_softmax along one dim (max-subtracted, so they never overflow).

Device-free: each op checks its argument's dtype with PyTorch's error, wraps `dim`, then
calls its device's backend (`_backends.<device>.softmax`: Numba row kernels on the CPU,
a row per block or a column per thread on CUDA) on the input in its compute dtype.
`softmax_backward`/`log_softmax_backward` are the fused backward passes (PyTorch's
`_softmax_backward_data`): one kernel reading the gradient and the output; the autograd
rules use them unless a graph of the gradient is wanted (create_graph), when they take
the same formula in differentiable ops.
"""
from ... import _backends
from ... import _dtype as D
from ..._dispatch import op
from ..._tensor import wrap_dim
from ._common import array_of, tensor_of

__all__ = ["softmax", "log_softmax", "softmax_backward", "log_softmax_backward"]


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


def _softmax_backward(grad_output, output, dim, log):
    axis = wrap_dim(dim, max(output.dim(), 1)) if output.dim() else 0
    gx = _backends.get(output._device).softmax.softmax_backward(
        array_of(grad_output, array_of(output).dtype), array_of(output), axis, log)
    return tensor_of(gx, grad_output._dtype, grad_output._device)


@op()
def softmax_backward(grad_output, output, dim):
    """Gradient of `softmax` w.r.t. its input, from its output y: y * (g - sum(g * y, dim))."""
    return _softmax_backward(grad_output, output, dim, False)


@op()
def log_softmax_backward(grad_output, output, dim):
    """Gradient of `log_softmax` w.r.t. its input, from its output y: g - exp(y) * sum(g, dim)."""
    return _softmax_backward(grad_output, output, dim, True)
