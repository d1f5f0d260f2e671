"""Helpers every optimizer shares: validation in PyTorch's words, state creation, scalars."""
import ember_tensor

from . import _fused

__all__ = ["check_non_negative", "check_betas", "get_value", "new_step", "zeros_state",
           "use_fused", "params_with_grad"]


def check_non_negative(value, message):
    """Raise PyTorch's ``ValueError(f"Invalid {what}: {value}")`` when ``value < 0``."""
    if isinstance(value, ember_tensor.Tensor):
        if value.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        value = value.item()
    if not 0.0 <= value:
        raise ValueError(message.format(value))


def check_betas(betas):
    """Each beta must lie in [0, 1): PyTorch's message names the index that does not."""
    for index, beta in enumerate(betas):
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"Invalid beta parameter at index {index}: {beta}")


def get_value(x):
    """A Python number from a number or a one-element tensor (the ``step`` counters)."""
    return x.item() if isinstance(x, ember_tensor.Tensor) else x


def new_step():
    """A fresh step counter: a float32 0-d tensor, as PyTorch keeps it in ``state["step"]``."""
    return ember_tensor.tensor(0.0, dtype=ember_tensor.float32)


def zeros_state(param):
    """A zero state buffer shaped like ``param`` (always contiguous, so it can be fused)."""
    return ember_tensor.zeros(param.shape, dtype=param.dtype, device=param.device)


def use_fused(fused, tensors):
    """Whether to run the fused op on ``tensors`` (the parameter first, then its grad and
    state): ``fused=None`` means "when that needs no copy", ``fused=True`` always (after
    PyTorch's device/dtype check of the parameter)."""
    if fused is False:
        return False
    if fused:
        _fused.check_fused_supported(tensors[0])
        return True
    return _fused.can_fuse(*tensors)


def params_with_grad(group):
    """The parameters of ``group`` that have a gradient, and those gradients."""
    params, grads = [], []
    for p in group["params"]:
        if p.grad is not None:
            params.append(p)
            grads.append(p.grad)
    return params, grads
