"""Gradient clipping: by total norm (clip_grad_norm_) or by value (clip_grad_value_)."""
import math
import types
import warnings

import ember_autograd
import ember_tensor
from ember_tensor import Tensor

__all__ = ["clip_grad_norm_", "clip_grad_value_", "get_total_norm", "clip_grads_with_norm_"]


def _as_list(parameters):
    if isinstance(parameters, Tensor):
        return [parameters]
    is_generator = isinstance(parameters, types.GeneratorType)
    parameters = list(parameters)  # a generator would be exhausted by the first pass
    if is_generator and not parameters:
        warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.", stacklevel=3)
    return parameters


def _vector_norm(t, norm_type):
    if t.is_sparse:  # a sparse gradient's norm is that of its summed (coalesced) entries
        t = t.coalesce()._values()
    if math.isinf(norm_type):
        values = t.abs()
        return values.amax() if norm_type > 0 else values.amin()
    return t.norm(norm_type)


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The `norm_type` norm of all `tensors` as if concatenated into one vector.

    `foreach` is accepted for PyTorch compatibility and ignored.
    """
    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return ember_tensor.tensor(0.0)
    device = tensors[0].device
    with ember_autograd.no_grad():
        norms = [_vector_norm(t, norm_type).to(device) for t in tensors]
        total = _vector_norm(ember_tensor.stack(norms), norm_type)
    if error_if_nonfinite and not math.isfinite(total.item()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it cannot "
            "be clipped. To disable this error and scale the gradients by the non-finite norm anyway, set "
            "`error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scale gradients in place by ``min(1, max_norm / (total_norm + 1e-6))``."""
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return
    with ember_autograd.no_grad():
        # Multiplying by a coefficient clamped to 1 avoids a data-dependent branch (and,
        # on a GPU, a device-to-host sync), as PyTorch does.
        coef = (float(max_norm) / (total_norm + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(coef.to(g.device, g.dtype))


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Rescale the gradients of `parameters` in place so that their total norm is at most
    `max_norm`; returns the total norm before clipping (a 0-d tensor).

    >>> import ember_tensor as torch
    >>> p = torch.zeros(2, requires_grad=True)
    >>> p.grad = torch.tensor([3.0, 4.0])
    >>> clip_grad_norm_([p], max_norm=1.0)
    tensor(5.)
    >>> [round(g, 4) for g in p.grad.tolist()]
    [0.6, 0.8]
    """
    parameters = _as_list(parameters)
    grads = [p.grad for p in parameters if p.grad is not None]
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient of `parameters` in place to [-clip_value, clip_value]."""
    clip_value = float(clip_value)
    with ember_autograd.no_grad():
        for p in ([parameters] if isinstance(parameters, Tensor) else parameters):
            if p.grad is not None:
                p.grad.clamp_(min=-clip_value, max=clip_value)


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Deprecated alias of :func:`clip_grad_norm_`."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)
