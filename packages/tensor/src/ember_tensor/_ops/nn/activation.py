"""Fused softmax and log_softmax along one dim (max-subtracted, so they never overflow).

Their backward passes are short formulas in differentiable ops (in the autograd rules),
so only the forward passes need kernels of their own: NumPy on the CPU, a row kernel
per block (or a column per thread for inner dims) on CUDA (`_backends.cuda.rows.softmax`).
"""
import numpy as np

from ... import _dtype as D
from ..._dispatch import op
from ..._tensor import wrap_dim
from ._common import from_array, to_array

__all__ = ["softmax", "log_softmax"]


def _prepare(input, dim, dtype, name):
    if dtype is not None:
        input = input.to(dtype)
    if input._dtype.category != D._FLOAT:
        raise RuntimeError(f"\"{name}_lastdim_kernel_impl\" not implemented for "
                           f"'{ {'int64': 'Long', 'int32': 'Int', 'bool': 'Bool'}.get(input._dtype.name, input._dtype.name)}'")
    axis = wrap_dim(dim, max(input.dim(), 1)) if input.dim() else 0
    return input, axis


def _on_cuda(input, axis, log):
    from ..._backends.cuda import rows as _cuda_rows
    return _cuda_rows.softmax(input, axis, log)


def _shifted(x, axis):
    if x.ndim == 0:
        return x - x
    peak = x.max(axis=axis, keepdims=True) if x.size else x
    # An all -inf slice must give nan, like PyTorch; shifting by -inf would do that anyway.
    return x - peak


@op()
def softmax(input, dim, dtype=None):
    """exp(x) / exp(x).sum(dim): ``softmax(tensor([0., 0.]), 0)`` -> ``tensor([0.5, 0.5])``."""
    input, axis = _prepare(input, dim, dtype, "softmax")
    if input._device.type == "cuda":
        return _on_cuda(input, axis, False)
    x = to_array(input)
    if x.ndim == 0:  # exp(x - x) / exp(x - x): 1, or NaN for an infinite or NaN x, as PyTorch
        with np.errstate(invalid="ignore"):
            e = np.exp(x - x)
            return from_array(e / e, input._dtype, input._device)
    e = np.exp(_shifted(x, axis))
    return from_array(e / e.sum(axis=axis, keepdims=True), input._dtype, input._device)


@op()
def log_softmax(input, dim, dtype=None):
    """x - logsumexp(x, dim), computed stably."""
    input, axis = _prepare(input, dim, dtype, "log_softmax")
    if input._device.type == "cuda":
        return _on_cuda(input, axis, True)
    x = to_array(input)
    if x.ndim == 0:  # x - x: 0, or NaN for an infinite or NaN x, as PyTorch
        with np.errstate(invalid="ignore"):
            return from_array(x - x, input._dtype, input._device)
    s = _shifted(x, axis)
    with np.errstate(divide="ignore"):
        out = s - np.log(np.exp(s).sum(axis=axis, keepdims=True))
    return from_array(out, input._dtype, input._device)
