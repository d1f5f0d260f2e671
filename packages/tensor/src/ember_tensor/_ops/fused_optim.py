"""Fused optimizer steps as ops: PyTorch's ``torch._fused_sgd_``, ``torch._fused_adam_``,
``torch._fused_adamw_`` and ``torch._fused_adagrad_`` (same names, arguments and errors;
Adagrad's is CPU-only, as in PyTorch).

Each takes lists of tensors (parameters, gradients, state buffers), checks them with
PyTorch's errors, and updates them in place through the device's `optim` backend family,
one call per device with every parameter on it: a Numba pass over each parameter on the
CPU; on CUDA multi-tensor kernels (PyTorch's multi_tensor_apply), one launch per compute
dtype for up to a kernel's capacity of parameters. ``ember_optim`` calls them for
``fused=True`` and, where the tensors allow, by default.

What the kernels see: 1-d contiguous float32/float64 arrays. A float16/bfloat16 tensor
is widened to a float32 copy and written back after the step (PyTorch computes half
types in float32 too), and a non-contiguous one goes through a contiguous copy (PyTorch
works on its memory directly; the result is the same). AMP's ``grad_scale`` (divide the
gradients, stored back unscaled) and ``found_inf`` (skip the step when it is 1) are
1-element float32 tensors; on CUDA the kernels read them on the device, so a CUDA step
never copies a value to the host.
"""
from .. import _backends
from .. import _dtype as D
from .._dispatch import op
from .._tensor import Tensor
from ._iter import type_name

__all__ = ["_fused_sgd_", "_fused_adam_", "_fused_adamw_", "_fused_adagrad_"]

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


def _on(t, device):
    """A one-element tensor (AMP's grad_scale/found_inf) as the step's backend reads it: its
    array when it lives on `device`, else its host value (never read back on a GPU)."""
    if t is None:
        return None
    return t._data if t._device == device else t._host_numpy()


def _step_value(step, device):
    """A step counter as the backend reads it: its array on `device`, else a number."""
    return step._data if step._device == device else step.item()


def _by_device(params):
    """The indices of `params` by device, in order: each device's backend steps them all in
    one call (on CUDA, multi-tensor launches)."""
    indices = {}
    for i, param in enumerate(params):
        indices.setdefault(param._device, []).append(i)
    return indices


def _arrays(tensors, indices):
    """The arrays of the tensors at `indices`, as a backend takes them."""
    return [tensors[i]._data for i in indices]


def _bump_versions(tensors):
    for t in tensors:
        if t is not None:
            t._bump_version()


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
        _check_group("fused_sgd_kernel", param, (grads[i], momentum_buffer_list[i] if momentum != 0 else None),
                     _SGD_NAMES)
    for device, indices in _by_device(params).items():
        written = _backends.get(device).optim.sgd(
            _arrays(params, indices), _arrays(grads, indices),
            _arrays(momentum_buffer_list, indices) if momentum != 0 else None, _on(grad_scale, device),
            _on(found_inf, device), lr=lr, weight_decay=weight_decay, momentum=momentum, dampening=dampening,
            nesterov=nesterov, maximize=maximize, first_step=is_first_step)
        for i, wrote in zip(indices, written):
            if wrote:
                _bump_versions((params[i], momentum_buffer_list[i] if momentum != 0 else None,
                                grads[i] if grad_scale is not None else None))


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
    groups = []
    for i, param in enumerate(params):
        group = (grads[i], exp_avgs[i], exp_avg_sqs[i], max_exp_avg_sqs[i] if amsgrad else None)
        _check_group("fused_adam_kernel", param, group, _ADAM_NAMES)
        step = state_steps[i]
        if step._data.size != 1:
            raise RuntimeError(f"a Tensor with {step._data.size} elements cannot be converted to Scalar")
        groups.append(group)
    for device, indices in _by_device(params).items():
        written = _backends.get(device).optim.adam(
            _arrays(params, indices), _arrays(grads, indices), _arrays(exp_avgs, indices),
            _arrays(exp_avg_sqs, indices), _arrays(max_exp_avg_sqs, indices) if amsgrad else None,
            [_step_value(state_steps[i], device) for i in indices],
            _on(grad_scale, device), _on(found_inf, device), **options)
        for i, wrote in zip(indices, written):
            if wrote:
                group = groups[i]
                _bump_versions((params[i],) + group[1:] + (group[0] if grad_scale is not None else None,))


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
    for param, grad, state_sum, step in zip(params, grads, state_sums, state_steps):
        _check_group("fused_adagrad_kernel", param, (grad, state_sum), _ADAGRAD_NAMES)
        device = param._device
        adagrad = getattr(_backends.get(device).optim, "adagrad", None)
        if adagrad is None:  # a declared gap of the device's backend (CUDA: as in PyTorch)
            raise NotImplementedError(
                "Could not run 'aten::_fused_adagrad_' with arguments from the "
                f"'{device.type.upper()}' backend. (PyTorch has no fused Adagrad on CUDA; "
                "use fused=None, whose ops run on the device.)")
        written = adagrad(param._data, grad._data, state_sum._data, _step_value(step, device),
                          _on(grad_scale, device), _on(found_inf, device), lr=lr, lr_decay=lr_decay,
                          weight_decay=weight_decay, eps=eps, maximize=maximize)
        if written:
            _bump_versions((param, state_sum, grad if grad_scale is not None else None))
