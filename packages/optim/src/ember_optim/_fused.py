"""When the optimizers use the fused update ops (``ember_tensor._fused_sgd_``,
``_fused_adam_``, ``_fused_adamw_``), which run one pass over each parameter on the CPU
and on CUDA, and ``_fused_adagrad_`` (CPU only, as in PyTorch; Adagrad fuses only with
``fused=True``).

``fused=True`` follows PyTorch's rule: every parameter must be a floating-point tensor on
a supported device (float16/bfloat16 are computed in float32; non-contiguous tensors go
through a contiguous copy inside the op). ``fused=None`` (the default) uses the fused op
where that costs no copy: contiguous float32/float64 tensors of one dtype on one device;
anything else runs the plain-op form. (PyTorch's default on the CPU is the plain for-loop;
ember defaults to its fused kernels because they are several times faster.)
"""
import numpy as np

import ember_tensor

__all__ = ["SUPPORTED_DEVICES", "can_fuse", "check_fused_supported", "check_fused_options"]

SUPPORTED_DEVICES = ["cpu", "cuda"]
_FAST_DTYPES = (ember_tensor.float32, ember_tensor.float64)


def can_fuse(*tensors):
    """Whether the fused op updates these tensors with no copy (None entries ignored).

    This runs for every parameter at every step: it reads the tensors' fields directly.
    """
    first = None
    for t in tensors:
        if t is None:
            continue
        if first is None:
            if t._dtype not in _FAST_DTYPES or t._device.type not in SUPPORTED_DEVICES:
                return False
            first = t
        elif t._dtype is not first._dtype or (t._device is not first._device
                                              and t._device != first._device):
            return False
        data = t._data
        if not (data.flags.c_contiguous if isinstance(data, np.ndarray) else t.is_contiguous()):
            return False
    return True


def check_fused_supported(param, cuda_supported=True):
    """PyTorch's ``fused=True`` check of one parameter (device and dtype); Adagrad's fused
    kernel is CPU-only (``cuda_supported=False``), as in PyTorch."""
    devices = SUPPORTED_DEVICES if cuda_supported else [d for d in SUPPORTED_DEVICES if d != "cuda"]
    if param.device.type not in devices or not param.is_floating_point():
        raise RuntimeError(
            "`fused=True` requires all the params to be floating point Tensors of supported "
            f"devices: {devices} but {param.dtype} and {param.device.type}")


def check_fused_options(fused, foreach, differentiable):
    """PyTorch's constructor checks of ``fused=True`` against the other options."""
    if fused:
        if differentiable:
            raise RuntimeError("`fused` does not support `differentiable`")
        if foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")

