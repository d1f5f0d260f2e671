"""CPU fused optimizer steps: SGD, Adam/AdamW and Adagrad, one Numba pass over each
parameter (`kernels/fused_optim.py`), serial below a size threshold and `prange` above.

`sgd` and `adam` take lists of arrays (parameters, gradients, state), as the CUDA
backend's multi-tensor steps do, and return, per parameter, whether they wrote it (False
when AMP's `found_inf` skips the step or the parameter is empty), so the op knows which
versions to bump; `adagrad` (CPU only) updates one parameter. Arrays arrive in their
storage dtype: float16/bfloat16 and strided ones go through float32 or contiguous copies
(`FlatOperands`). AMP's `grad_scale`/`found_inf` are read on the host (one-element
arrays), where reading is free.
"""
import numpy as np

from ..flat_operands import FlatOperands
from ..lazy import lazy
from . import storage

__all__ = ["sgd", "adam", "adagrad", "non_finite_check_and_unscale", "update_scale"]

K = lazy("cpu.kernels.fused_optim")  # Numba loads on first use


def _value(arr):
    return None if arr is None else float(np.asarray(arr).reshape(-1)[0])


def _amp(grad_scale, found_inf):
    """(skip the step?, the scale or None)."""
    return _value(found_inf) == 1.0, _value(grad_scale)


def _views(compute, arrays):
    """1-d views of arrays that all are contiguous arrays of dtype `compute`, else None."""
    views = []
    for data in arrays:
        if data.dtype != compute or not data.flags.c_contiguous:
            return None
        views.append(data if data.ndim == 1 else data.reshape(-1))
    return views


def _operands(compute, param, grad, state, scale):
    """(flat views of param, grad, *state, the FlatOperands to write back or None)."""
    views = _views(compute, (param, grad) + state)
    if views is not None and scale is None:
        return views, None
    operands = FlatOperands(storage, compute)  # copies (half types, strided) or AMP unscaling
    g = operands(grad, written=scale is not None)
    if scale is not None:
        np.divide(g, g.dtype.type(scale), out=g)
    return [operands(param), g] + [operands(s) for s in state], operands


def _compute(dtype):
    return np.dtype(np.float32) if dtype.itemsize == 2 else dtype  # half types in float32


def _sgd_one(param, grad, buf, grad_scale, found_inf, *, lr, weight_decay, momentum, dampening, nesterov,
             maximize, first_step):
    """One SGD step of `param` (and its momentum buffer `buf`, or None), in place."""
    skip, scale = _amp(grad_scale, found_inf)
    if skip or param.size == 0:
        return False
    views, operands = _operands(_compute(param.dtype), param, grad, () if buf is None else (buf,), scale)
    K.sgd_update(views[0], views[1], None if buf is None else views[2], lr=lr, weight_decay=weight_decay,
                 momentum=momentum, dampening=dampening, nesterov=nesterov, maximize=maximize,
                 first_step=first_step)
    if operands is not None:
        operands.write_back()
    return True


def _adam_one(param, grad, exp_avg, exp_avg_sq, max_sq, step, grad_scale, found_inf, *, lr, beta1, beta2,
              weight_decay, eps, amsgrad, maximize, decoupled):
    """One Adam (AdamW with `decoupled`) step of `param` and its moments, in place; `step`
    counts this step (a number, or a one-element array)."""
    skip, scale = _amp(grad_scale, found_inf)
    if skip or param.size == 0:
        return False
    state = (exp_avg, exp_avg_sq) + ((max_sq,) if amsgrad else ())
    views, operands = _operands(_compute(param.dtype), param, grad, state, scale)
    K.adam_update(*views[:4], views[4] if amsgrad else None, step=_value(step) if not isinstance(step, float)
                  else step, lr=lr, beta1=beta1, beta2=beta2, eps=eps, weight_decay=weight_decay,
                  decoupled_weight_decay=decoupled, amsgrad=amsgrad, maximize=maximize)
    if operands is not None:
        operands.write_back()
    return True


def sgd(params, grads, bufs, grad_scale, found_inf, *, lr, weight_decay, momentum, dampening, nesterov, maximize,
        first_step):
    """One SGD step of every array of `params` (with its momentum buffer in `bufs`, or `bufs`
    None), in place (the CUDA backend's parameters: one multi-tensor launch there)."""
    options = dict(lr=lr, weight_decay=weight_decay, momentum=momentum, dampening=dampening, nesterov=nesterov,
                   maximize=maximize, first_step=first_step)
    return [_sgd_one(param, grads[i], None if bufs is None else bufs[i], grad_scale, found_inf, **options)
            for i, param in enumerate(params)]


def adam(params, grads, exp_avgs, exp_avg_sqs, max_sqs, steps, grad_scale, found_inf, *, lr, beta1, beta2,
         weight_decay, eps, amsgrad, maximize, decoupled):
    """One Adam (AdamW with `decoupled`) step of every array of `params` and its moments, in
    place (`max_sqs` None without amsgrad; the CUDA backend's parameters)."""
    options = dict(lr=lr, beta1=beta1, beta2=beta2, weight_decay=weight_decay, eps=eps, amsgrad=amsgrad,
                   maximize=maximize, decoupled=decoupled)
    return [_adam_one(param, grads[i], exp_avgs[i], exp_avg_sqs[i], None if max_sqs is None else max_sqs[i],
                      steps[i], grad_scale, found_inf, **options)
            for i, param in enumerate(params)]


def adagrad(param, grad, state_sum, step, grad_scale, found_inf, *, lr, lr_decay, weight_decay, eps, maximize):
    """One Adagrad step of `param` and its sum of squares, in place (CPU only, as in PyTorch)."""
    skip, scale = _amp(grad_scale, found_inf)
    if skip or param.size == 0:
        return False
    views, operands = _operands(_compute(param.dtype), param, grad, (state_sum,), scale)
    K.adagrad_update(*views, step=_value(step) if not isinstance(step, float) else step, lr=lr, lr_decay=lr_decay,
                     weight_decay=weight_decay, eps=eps, maximize=maximize)
    if operands is not None:
        operands.write_back()
    return True


def non_finite_check_and_unscale(grads, found_inf, inv_scale):
    """AMP's unscale: every array of `grads` multiplied by `inv_scale` in place, one pass each,
    and `found_inf` (a one-element array) set to 1.0 if any element of any was inf or nan."""
    scale = _value(inv_scale)
    found = False
    for grad in grads:
        if grad.size == 0:
            continue
        views = _views(_compute(grad.dtype), (grad,))
        if views is not None:
            found |= K.check_and_unscale(views[0], scale)
            continue
        operands = FlatOperands(storage, _compute(grad.dtype))  # half types, strided arrays
        found |= K.check_and_unscale(operands(grad), scale)
        operands.write_back()
    if found:
        found_inf.reshape(-1)[0] = 1.0


def update_scale(scale, growth_tracker, found_inf, growth_factor, backoff_factor, growth_interval):
    """AMP's scale update, in place on one-element arrays: back off on inf/nan, grow after
    `growth_interval` clean steps in a row (unless the grown scale would be inf)."""
    scale, tracker = scale.reshape(-1), growth_tracker.reshape(-1)
    if _value(found_inf):
        scale[0] *= backoff_factor
        tracker[0] = 0
        return
    successful = int(tracker[0]) + 1
    if successful == growth_interval:
        with np.errstate(over="ignore"):  # an overflowing scale is refused below, not warned about
            grown = scale.dtype.type(scale[0] * growth_factor)
        if np.isfinite(grown):
            scale[0] = grown
        tracker[0] = 0
    else:
        tracker[0] = successful
