"""Fused optimizer steps as ops: PyTorch's ``torch._fused_sgd_``, ``torch._fused_adam_``,
``torch._fused_adamw_`` and ``torch._fused_adagrad_`` (same names, arguments and errors;
Adagrad's is CPU-only, as in PyTorch).

Each takes lists of tensors (parameters, gradients, state buffers) and updates them in
place with one pass over memory per parameter: a Numba loop on the CPU
(`_kernels/cpu_fused_optim`), a numba.cuda grid-stride kernel on CUDA
(`_kernels/cuda_fused_optim`). ``ember_optim`` calls them for ``fused=True`` and, where
the tensors allow, by default.

What the kernels see: 1-d contiguous float32/float64 arrays. A float16/bfloat16 tensor
is widened to a float32 copy and written back after the step (PyTorch computes half
types in float32 too), and a non-contiguous one goes through a contiguous copy (PyTorch
works on its memory directly; the result is the same). AMP's ``grad_scale`` (divide the
gradients, stored back unscaled) and ``found_inf`` (skip the step when it is 1) are
1-element float32 tensors; on CUDA the kernels read them on the device, so a CUDA step
never copies a value to the host.
"""
import numpy as np

from .. import _dtype as D
from .._dispatch import op
from .._tensor import Tensor
from ._fused_operands import (
    FlatOperands, bump_versions, compute_dtype, cpu_views, device_amp_arrays, host_amp_values,
    kernel_module, placeholder, unscale_on_host,
)
from ._iter import type_name

__all__ = ["_fused_sgd_", "_fused_adam_", "_fused_adamw_", "_fused_adagrad_"]

_FLOAT32 = np.dtype(np.float32)
_FLOAT_TYPES = (D.float16, D.bfloat16, D.float32, D.float64)


# --- argument checks, in PyTorch's words ---------------------------------------------------

def _check_list_sizes(n_tensors, lists):
    for name, tensors in lists:
        if len(tensors) != n_tensors:
            raise RuntimeError(f"Expected {name}.size() == n_tensors to be true, but got false.  "
                               "(Could this error message be improved?  If so, please report an "
                               "enhancement request to PyTorch.)")


def _check_group(kernel_name, param, tensors, names):
    """The ``tensors`` updated with ``param`` must share its dtype, device and shape."""
    if not isinstance(param, Tensor):
        raise TypeError(f"expected Tensor as element 0 in argument 0, but got {type(param).__name__}")
    dtype, device, shape = param._dtype, param._device, param._data.shape
    if dtype not in _FLOAT_TYPES:
        raise NotImplementedError(f"\"{kernel_name}\" not implemented for '{type_name(dtype)}'")
    for t in tensors:  # the common case, quickly: this runs for every parameter
        if t is not None and (t._dtype is not dtype or t._data.shape != shape or t._device != device):
            break
    else:
        return
    for name, t in zip(names, tensors):
        if t is None:
            continue
        if t._device != param._device:
            raise RuntimeError("Expected all tensors to be on the same device, but found at least two "
                               f"devices, {param._device} and {t._device}!")
        if t._dtype != param._dtype:
            raise RuntimeError(f"expected scalar type {type_name(param._dtype)} but found "
                               f"{type_name(t._dtype)}")
        if t._data.shape != shape:
            raise RuntimeError(f"{kernel_name}: {name} has shape {list(t._data.shape)} but its "
                               f"parameter has shape {list(param._data.shape)}")


def _check_amp_tensor(t):
    """``grad_scale``/``found_inf``: None or a one-element float32 tensor."""
    if t is None:
        return
    if t._dtype != D.float32:
        raise RuntimeError(f"expected scalar type Float but found {type_name(t._dtype)}")
    if t._data.size != 1:
        raise RuntimeError(f"a Tensor with {t._data.size} elements cannot be converted to Scalar")


def _number(x):
    """A Python number from a number or a one-element tensor (``lr`` may be a tensor)."""
    return x.item() if isinstance(x, Tensor) else x


_SGD_NAMES = ("grads", "momentum_buffer_list")
_ADAM_NAMES = ("grads", "exp_avgs", "exp_avg_sqs", "max_exp_avg_sqs")
_ADAGRAD_NAMES = ("grads", "state_sums")


# --- SGD ---------------------------------------------------------------------------------

@op("_fused_sgd_")
def _fused_sgd_(self, grads, momentum_buffer_list, *, weight_decay, momentum, lr, dampening,
                nesterov, maximize, is_first_step, grad_scale=None, found_inf=None):
    """One SGD step for every parameter in ``self`` (a list), in place (``torch._fused_sgd_``).

    ``momentum_buffer_list`` is empty when ``momentum == 0``; with ``is_first_step`` the
    buffers are overwritten with the (decayed) gradient instead of being read.

    >>> import ember_tensor as torch
    >>> p, g = torch.tensor([1.0, 2.0]), torch.tensor([0.5, -1.0])
    >>> torch._fused_sgd_([p], [g], [], weight_decay=0.0, momentum=0.0, lr=0.1, dampening=0.0,
    ...                   nesterov=False, maximize=False, is_first_step=False)
    >>> p
    tensor([0.9500, 2.1000])
    """
    params = list(self)
    _check_list_sizes(len(params), [("grads", grads)])
    if momentum == 0 and len(momentum_buffer_list):
        raise RuntimeError("Expected momentum_buffer_list.empty() to be true, but got false.  (Could "
                           "this error message be improved?  If so, please report an enhancement "
                           "request to PyTorch.)")
    if momentum != 0:
        _check_list_sizes(len(params), [("momentum_buffer_list", momentum_buffer_list)])
    _check_amp_tensor(grad_scale)
    _check_amp_tensor(found_inf)
    lr = _number(lr)
    for i, param in enumerate(params):
        buf = momentum_buffer_list[i] if momentum != 0 else None
        _check_group("fused_sgd_kernel", param, (grads[i], buf), _SGD_NAMES)
        if param._device.type == "cuda":
            _sgd_cuda(param, grads[i], buf, grad_scale, found_inf, lr, weight_decay, momentum,
                      dampening, nesterov, maximize, is_first_step)
        else:
            _sgd_cpu(param, grads[i], buf, grad_scale, found_inf, lr, weight_decay, momentum,
                     dampening, nesterov, maximize, is_first_step)


def _sgd_cpu(param, grad, buf, grad_scale, found_inf, lr, weight_decay, momentum, dampening,
             nesterov, maximize, first_step):
    skip, scale = host_amp_values(grad_scale, found_inf)
    if skip or param._data.size == 0:
        return
    compute = compute_dtype(param._dtype)
    views = cpu_views(compute, (param, grad) if buf is None else (param, grad, buf))
    operands = None
    if views is None or scale is not None:  # copies (half types, strided) or AMP unscaling
        operands = FlatOperands(param._device, compute)
        g = operands(grad, written=False) if scale is None else unscale_on_host(operands, grad, scale)
        views = [operands(param), g] + ([] if buf is None else [operands(buf)])
    kernel_module("cpu.kernels.fused_optim").sgd_update(
        views[0], views[1], None if buf is None else views[2], lr=lr, weight_decay=weight_decay,
        momentum=momentum, dampening=dampening, nesterov=nesterov, maximize=maximize,
        first_step=first_step)
    if operands is not None:
        operands.write_back()
    bump_versions((param, buf, grad if scale is not None else None))


def _sgd_cuda(param, grad, buf, grad_scale, found_inf, lr, weight_decay, momentum, dampening,
              nesterov, maximize, first_step):
    n = param._data.size
    if n == 0:
        return
    kernels = kernel_module("cuda.kernels.fused_optim")
    compute = compute_dtype(param._dtype)
    operands = FlatOperands(param._device, compute)
    backend = operands.backend
    flags, (scale_arr, found_arr) = device_amp_arrays(backend, param._device, grad_scale, found_inf)
    flags |= ((kernels.SGD_NESTEROV if nesterov else 0) | (kernels.SGD_MAXIMIZE if maximize else 0)
              | (kernels.SGD_FIRST_STEP if first_step else 0))
    p = operands(param)
    g = operands(grad, written=grad_scale is not None)
    b = operands(buf) if buf is not None else p  # never touched when momentum is 0
    scalar = compute.type
    kernel_module("cuda.launch").grid_stride(kernels.sgd_kernel(compute), n, p, g, b, scale_arr, found_arr, scalar(lr),
                    scalar(weight_decay), scalar(momentum), scalar(1 - dampening), np.int64(flags))
    operands.write_back()
    bump_versions((param, buf, grad if grad_scale is not None else None))


# --- Adam / AdamW --------------------------------------------------------------------------

_ADAM_DOC_EXAMPLE = """
    >>> import ember_tensor as torch
    >>> p, g = torch.tensor([1.0, 2.0]), torch.tensor([0.5, -1.0])
    >>> m, v, step = torch.zeros(2), torch.zeros(2), torch.tensor(1.0)
    >>> torch.{name}([p], [g], [m], [v], [], [step], lr=0.1, beta1=0.9, beta2=0.999,
    ...     weight_decay=0.0, eps=1e-8, amsgrad=False, maximize=False)
    >>> p
    tensor([0.9000, 2.1000])
"""


@op("_fused_adam_")
def _fused_adam_(self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, *, lr, beta1,
                 beta2, weight_decay, eps, amsgrad, maximize, grad_scale=None, found_inf=None):
    """One Adam step for every parameter in ``self`` (a list), in place (``torch._fused_adam_``).

    ``state_steps`` (one-element tensors) already count this step: the caller advances
    them, as PyTorch's optimizer does. ``max_exp_avg_sqs`` is used with ``amsgrad`` only.
    """
    _adam_step(self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr, beta1, beta2,
               weight_decay, eps, amsgrad, maximize, grad_scale, found_inf, decoupled=False)


@op("_fused_adamw_")
def _fused_adamw_(self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, *, lr, beta1,
                  beta2, weight_decay, eps, amsgrad, maximize, grad_scale=None, found_inf=None):
    """``_fused_adam_`` with decoupled weight decay (``torch._fused_adamw_``)."""
    _adam_step(self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr, beta1, beta2,
               weight_decay, eps, amsgrad, maximize, grad_scale, found_inf, decoupled=True)


_fused_adam_.__doc__ += _ADAM_DOC_EXAMPLE.format(name="_fused_adam_")
_fused_adamw_.__doc__ += _ADAM_DOC_EXAMPLE.format(name="_fused_adamw_")


def _adam_step(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr, beta1, beta2,
               weight_decay, eps, amsgrad, maximize, grad_scale, found_inf, decoupled):
    params = list(params)
    lists = [("grads", grads), ("exp_avgs", exp_avgs), ("exp_avg_sqs", exp_avg_sqs)]
    if amsgrad:
        lists.append(("max_exp_avg_sqs", max_exp_avg_sqs))
    _check_list_sizes(len(params), lists + [("state_steps", state_steps)])
    _check_amp_tensor(grad_scale)
    _check_amp_tensor(found_inf)
    lr = _number(lr)
    options = dict(lr=lr, beta1=beta1, beta2=beta2, weight_decay=weight_decay, eps=eps,
                   amsgrad=amsgrad, maximize=maximize, decoupled=decoupled)
    for i, param in enumerate(params):
        group = (grads[i], exp_avgs[i], exp_avg_sqs[i], max_exp_avg_sqs[i] if amsgrad else None)
        _check_group("fused_adam_kernel", param, group, _ADAM_NAMES)
        step = state_steps[i]
        if step._data.size != 1:
            raise RuntimeError(f"a Tensor with {step._data.size} elements cannot be converted to Scalar")
        if param._device.type == "cuda":
            _adam_cuda(param, *group, step, grad_scale, found_inf, **options)
        else:
            _adam_cpu(param, *group, step, grad_scale, found_inf, **options)


def _adam_cpu(param, grad, exp_avg, exp_avg_sq, max_sq, step, grad_scale, found_inf, *, lr, beta1,
              beta2, weight_decay, eps, amsgrad, maximize, decoupled):
    skip, scale = host_amp_values(grad_scale, found_inf)
    if skip or param._data.size == 0:
        return
    compute = compute_dtype(param._dtype)
    tensors = (param, grad, exp_avg, exp_avg_sq) + ((max_sq,) if amsgrad else ())
    views = cpu_views(compute, tensors)
    operands = None
    if views is None or scale is not None:  # copies (half types, strided) or AMP unscaling
        operands = FlatOperands(param._device, compute)
        g = operands(grad, written=False) if scale is None else unscale_on_host(operands, grad, scale)
        views = [operands(param), g] + [operands(t) for t in tensors[2:]]
    kernel_module("cpu.kernels.fused_optim").adam_update(
        *views[:4], views[4] if amsgrad else None, step=step.item(), lr=lr, beta1=beta1,
        beta2=beta2, eps=eps, weight_decay=weight_decay, decoupled_weight_decay=decoupled,
        amsgrad=amsgrad, maximize=maximize)
    if operands is not None:
        operands.write_back()
    bump_versions((param, exp_avg, exp_avg_sq, max_sq, grad if scale is not None else None))


def _adam_cuda(param, grad, exp_avg, exp_avg_sq, max_sq, step, grad_scale, found_inf, *, lr, beta1,
               beta2, weight_decay, eps, amsgrad, maximize, decoupled):
    n = param._data.size
    if n == 0:
        return
    kernels = kernel_module("cuda.kernels.fused_optim")
    compute = compute_dtype(param._dtype)
    operands = FlatOperands(param._device, compute)
    backend = operands.backend
    flags, (scale_arr, found_arr) = device_amp_arrays(backend, param._device, grad_scale, found_inf)
    weight1 = 1 - beta1
    coupled = weight_decay != 0 and not decoupled
    flags |= ((kernels.ADAM_AMSGRAD if amsgrad else 0) | (kernels.ADAM_COUPLED_DECAY if coupled else 0)
              | (kernels.ADAM_LERP_LOW if weight1 < 0.5 else 0))
    if step._device == param._device:
        # PyTorch's fused=True keeps the step on the device: the kernel reads it there.
        flags |= kernels.ADAM_DEVICE_STEP
        step_arr = backend.storage.flat(step._data if step._data.dtype == _FLOAT32
                                 else backend.storage.astype(step._data, _FLOAT32))
        step_size = bias_correction2_sqrt = 1.0  # computed by the kernel
    else:  # a host step counter (the default state): the bias corrections are host math
        t = step.item()
        step_arr = placeholder(backend, param._device)
        step_size = lr / (1 - beta1 ** t)
        bias_correction2_sqrt = (1 - beta2 ** t) ** 0.5
    p, m, v = operands(param), operands(exp_avg), operands(exp_avg_sq)
    g = operands(grad, written=grad_scale is not None)
    vmax = operands(max_sq) if amsgrad else p  # never touched without amsgrad
    scalar = compute.type
    kernel_module("cuda.launch").grid_stride(
        kernels.adam_kernel(compute), n, p, g, m, v, vmax, step_arr, scale_arr, found_arr,
        scalar(-1 if maximize else 1), scalar(weight_decay),
        scalar(1 - lr * weight_decay if decoupled else 1), scalar(weight1), scalar(1 - weight1),
        scalar(beta2), scalar(1 - beta2), scalar(eps), scalar(step_size), scalar(bias_correction2_sqrt),
        np.float64(lr), np.float64(beta1), np.float64(beta2), np.int64(flags))
    operands.write_back()
    bump_versions((param, exp_avg, exp_avg_sq, max_sq, grad if grad_scale is not None else None))


# --- Adagrad (CPU only, as in PyTorch) -------------------------------------------------------

@op("_fused_adagrad_")
def _fused_adagrad_(self, grads, state_sums, state_steps, *, lr, lr_decay, weight_decay, eps, maximize,
                    grad_scale=None, found_inf=None):
    """One Adagrad step for every parameter in ``self`` (a list), in place
    (``torch._fused_adagrad_``; CPU tensors only, as in PyTorch).

    ``state_steps`` already count this step; the learning rate is
    ``lr / (1 + (step - 1) * lr_decay)``.

    >>> import ember_tensor as torch
    >>> p, s = torch.ones(2), torch.zeros(2)
    >>> torch._fused_adagrad_([p], [torch.tensor([2.0, -4.0])], [s], [torch.tensor(1.0)], lr=0.1,
    ...                       lr_decay=0.0, weight_decay=0.0, eps=1e-10, maximize=False)
    >>> p, s
    (tensor([0.9000, 1.1000]), tensor([ 4., 16.]))
    """
    params = list(self)
    _check_list_sizes(len(params), [("grads", grads), ("state_sums", state_sums),
                                    ("state_steps", state_steps)])
    _check_amp_tensor(grad_scale)
    _check_amp_tensor(found_inf)
    lr = _number(lr)
    skip, scale = host_amp_values(grad_scale, found_inf)
    for param, grad, state_sum, step in zip(params, grads, state_sums, state_steps):
        _check_group("fused_adagrad_kernel", param, (grad, state_sum), _ADAGRAD_NAMES)
        if param._device.type != "cpu":
            raise NotImplementedError(
                "Could not run 'aten::_fused_adagrad_' with arguments from the "
                f"'{param._device.type.upper()}' backend. (PyTorch has no fused Adagrad on CUDA; "
                "use fused=None, whose ops run on the device.)")
        if skip or param._data.size == 0:
            continue
        compute = compute_dtype(param._dtype)
        views = cpu_views(compute, (param, grad, state_sum))
        operands = None
        if views is None or scale is not None:  # copies (half types, strided) or AMP unscaling
            operands = FlatOperands(param._device, compute)
            g = operands(grad, written=False) if scale is None else unscale_on_host(operands, grad, scale)
            views = [operands(param), g, operands(state_sum)]
        kernel_module("cpu.kernels.fused_optim").adagrad_update(
            *views, step=step.item(), lr=lr, lr_decay=lr_decay, weight_decay=weight_decay, eps=eps,
            maximize=maximize)
        if operands is not None:
            operands.write_back()
        bump_versions((param, state_sum, grad if scale is not None else None))
