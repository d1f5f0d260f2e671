"""CUDA fused optimizer steps: SGD and Adam/AdamW as one grid-stride kernel per parameter
(`kernels/fused_optim.py`); Adagrad has none, as in PyTorch (a declared gap). AMP's
check-and-unscale: one multi-tensor launch over all the gradients of a dtype.

The same functions as `_backends.cpu.optim`. AMP's `grad_scale`/`found_inf` and a step
counter kept on the device (PyTorch's `fused=True` state) are read by the kernels on the
device, so a step never copies a value to the host; a host value is uploaded, never read
back. Each function returns whether it wrote anything (False for an empty parameter).
"""
import numpy as np

from . import arrays, launch, runtime, storage
from ..flat_operands import FlatOperands
from .kernels import fused_optim as K

__all__ = ["sgd", "adam", "non_finite_check_and_unscale", "update_scale"]

_FLOAT32 = np.dtype(np.float32)
_placeholders = {}
_paddings = {}


def _placeholder():
    """A 1-element float32 device array passed where a kernel argument is absent."""
    index = runtime.current_index()
    arr = _placeholders.get(index)
    if arr is None:
        arr = _placeholders[index] = storage.fill_(storage.empty((1,), np.float32), 0.0)
    return arr


def _amp_arrays(grad_scale, found_inf):
    """Device arrays for grad_scale/found_inf (a placeholder when absent) and their flag bits."""
    flags, found = 0, []
    for value, bit in ((grad_scale, K.HAS_GRAD_SCALE), (found_inf, K.HAS_FOUND_INF)):
        if value is None:
            found.append(_placeholder())
            continue
        flags |= bit
        if arrays.is_array(value):
            found.append(arrays.flat(value))
        else:  # a host (or other GPU's) value: uploaded, never read back
            found.append(storage.from_numpy(np.asarray(value, np.float32).reshape(1)))
    return flags, found


def _compute(dtype):
    return _FLOAT32 if dtype.itemsize == 2 else dtype  # half types in float32


def sgd(param, grad, buf, grad_scale, found_inf, *, lr, weight_decay, momentum, dampening, nesterov, maximize,
        first_step):
    """One SGD step of `param` (and its momentum buffer `buf`, or None), in place."""
    n = param.size
    if n == 0:
        return False
    compute = _compute(param.dtype)
    operands = FlatOperands(storage, compute)
    flags, (scale_arr, found_arr) = _amp_arrays(grad_scale, found_inf)
    flags |= ((K.SGD_NESTEROV if nesterov else 0) | (K.SGD_MAXIMIZE if maximize else 0)
              | (K.SGD_FIRST_STEP if first_step else 0))
    p = operands(param)
    g = operands(grad, written=grad_scale is not None)
    b = operands(buf) if buf is not None else p  # never touched when momentum is 0
    scalar = compute.type
    launch.grid_stride(K.sgd_kernel(compute), n, p, g, b, scale_arr, found_arr, scalar(lr), scalar(weight_decay),
                       scalar(momentum), scalar(1 - dampening), np.int64(flags))
    operands.write_back()
    return True


def adam(param, grad, exp_avg, exp_avg_sq, max_sq, step, grad_scale, found_inf, *, lr, beta1, beta2,
         weight_decay, eps, amsgrad, maximize, decoupled):
    """One Adam (AdamW with `decoupled`) step of `param` and its moments, in place; `step`
    counts this step: a one-element device array (read by the kernel) or a number."""
    n = param.size
    if n == 0:
        return False
    compute = _compute(param.dtype)
    operands = FlatOperands(storage, compute)
    flags, (scale_arr, found_arr) = _amp_arrays(grad_scale, found_inf)
    weight1 = 1 - beta1
    coupled = weight_decay != 0 and not decoupled
    flags |= ((K.ADAM_AMSGRAD if amsgrad else 0) | (K.ADAM_COUPLED_DECAY if coupled else 0)
              | (K.ADAM_LERP_LOW if weight1 < 0.5 else 0))
    if arrays.is_array(step):
        # PyTorch's fused=True keeps the step on the device: the kernel reads it there.
        flags |= K.ADAM_DEVICE_STEP
        step_arr = arrays.flat(step if step.dtype == _FLOAT32 else storage.astype(step, _FLOAT32))
        step_size = bias_correction2_sqrt = 1.0  # computed by the kernel
    else:  # a host step counter (the default state): the bias corrections are host math
        step_arr = _placeholder()
        step_size = lr / (1 - beta1 ** step)
        bias_correction2_sqrt = (1 - beta2 ** step) ** 0.5
    p, m, v = operands(param), operands(exp_avg), operands(exp_avg_sq)
    g = operands(grad, written=grad_scale is not None)
    vmax = operands(max_sq) if amsgrad else p  # never touched without amsgrad
    scalar = compute.type
    launch.grid_stride(
        K.adam_kernel(compute), n, p, g, m, v, vmax, step_arr, scale_arr, found_arr,
        scalar(-1 if maximize else 1), scalar(weight_decay),
        scalar(1 - lr * weight_decay if decoupled else 1), scalar(weight1), scalar(1 - weight1),
        scalar(beta2), scalar(1 - beta2), scalar(eps), scalar(step_size), scalar(bias_correction2_sqrt),
        np.float64(lr), np.float64(beta1), np.float64(beta2), np.int64(flags))
    operands.write_back()
    return True


def _device_scalar(value):
    """A one-element float32 device array: `value`'s own when it is one, else uploaded."""
    if arrays.is_array(value):
        return arrays.flat(value)
    return storage.from_numpy(np.asarray(value, np.float32).reshape(1))


def non_finite_check_and_unscale(grads, found_inf, inv_scale):
    """AMP's unscale: every array of `grads` multiplied by `inv_scale` in place, with
    `found_inf` set to 1.0 on the device if any element of any was inf or nan (nothing is
    read back to the host). One multi-tensor kernel launch per compute dtype covers up to
    `MULTI_TENSOR_CAPACITY` gradients (PyTorch's multi_tensor_apply, which also launches
    again when its table fills); half-precision and strided gradients go through float32
    work copies, written back after the launch."""
    found = arrays.flat(found_inf)
    scale = _device_scalar(inv_scale)
    groups = {}  # compute dtype -> (FlatOperands, [flat arrays])
    for grad in grads:
        if grad.size == 0:
            continue
        compute = _compute(grad.dtype)
        if compute not in groups:
            groups[compute] = (FlatOperands(storage, compute), [])
        operands, flats = groups[compute]
        flats.append(operands(grad))
    capacity = K.MULTI_TENSOR_CAPACITY
    for compute, (operands, flats) in groups.items():
        kernel = K.check_and_unscale_kernel(compute)
        padding = _padding(compute)
        for first in range(0, len(flats), capacity):
            chunk = flats[first:first + capacity]
            table = tuple(chunk) + (padding,) * (capacity - len(chunk))
            launch.grid_stride(kernel, max(f.shape[0] for f in chunk), table, np.int64(len(chunk)), found, scale)
        operands.write_back()


def _padding(dtype):
    """A 1-element device array of `dtype` filling the unused places of a multi-tensor
    launch's tuple (never read: the kernel stops at the count)."""
    key = (runtime.current_index(), np.dtype(dtype))
    arr = _paddings.get(key)
    if arr is None:
        arr = _paddings[key] = storage.fill_(storage.empty((1,), dtype), 0.0)
    return arr


def update_scale(scale, growth_tracker, found_inf, growth_factor, backoff_factor, growth_interval):
    """AMP's scale update, in place on one-element device arrays, by one device thread."""
    launch.grid_stride(K.update_scale, 1, arrays.flat(scale), arrays.flat(growth_tracker),
                       _device_scalar(found_inf), np.float64(growth_factor), np.float64(backoff_factor),
                       np.int64(growth_interval))
