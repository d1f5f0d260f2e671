"""DataParallel: one process, several CUDA devices; the batch is split along `dim`.

With no CUDA device, or one, the wrapped module simply runs (on that device).
"""
from itertools import chain

import ember_tensor

from ..modules.module import Module
from .replicate import replicate
from .scatter_gather import gather, scatter_kwargs

__all__ = ["DataParallel", "data_parallel"]


def _cuda_device_count():
    try:
        cuda = ember_tensor.cuda
        return cuda.device_count() if cuda.is_available() else 0
    except Exception:  # no CUDA backend usable on this machine
        return 0


def _device_index(device):
    if isinstance(device, int):
        return device
    device = ember_tensor.device(device)
    return device.index or 0


class DataParallel(Module):
    """Run `module` on slices of the batch on each of `device_ids` and gather the
    outputs on `output_device`.

    >>> import ember_tensor as torch, ember_nn as nn
    >>> model = nn.DataParallel(nn.Linear(4, 2))  # no GPU: runs the module as is
    >>> model(torch.ones(3, 4)).shape
    torch.Size([3, 2])
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.dim = dim
        if _cuda_device_count() == 0:
            self.device_ids = []
            return
        if device_ids is None:
            device_ids = list(range(_cuda_device_count()))
        if output_device is None:
            output_device = device_ids[0]
        self.device_ids = [_device_index(d) for d in device_ids]
        self.output_device = _device_index(output_device)
        self.src_device_obj = ember_tensor.device("cuda", self.device_ids[0])
        if len(self.device_ids) == 1:
            self.module.to(self.src_device_obj)

    def forward(self, *inputs, **kwargs):
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        for t in chain(self.module.parameters(), self.module.buffers()):
            if t.device != self.src_device_obj:
                raise RuntimeError(f"module must have its parameters and buffers on device {self.src_device_obj} "
                                   f"(device_ids[0]) but found one of them on device: {t.device}")
        inputs, module_kwargs = self.scatter(inputs, kwargs, self.device_ids)
        if not inputs and not module_kwargs:
            inputs, module_kwargs = ((),), ({},)
        if len(self.device_ids) == 1:
            return self.module(*inputs[0], **module_kwargs[0])
        replicas = self.replicate(self.module, self.device_ids[:len(inputs)])
        outputs = self.parallel_apply(replicas, inputs, module_kwargs)
        return self.gather(outputs, self.output_device)

    def replicate(self, module, device_ids):
        """One differentiable copy of `module` per device."""
        return replicate(module, [ember_tensor.device("cuda", i) for i in device_ids])

    def scatter(self, inputs, kwargs, device_ids):
        """Split inputs and kwargs along `dim`, one part per device."""
        return scatter_kwargs(inputs, kwargs, device_ids, dim=self.dim)

    def parallel_apply(self, replicas, inputs, kwargs):
        """Each replica on its part, in turn from this thread (ember has no per-device
        worker threads)."""
        return [replica(*args, **kw) for replica, args, kw in zip(replicas, inputs, kwargs)]

    def gather(self, outputs, output_device):
        """Concatenate the replicas' outputs on `output_device`."""
        return gather(outputs, output_device, dim=self.dim)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    """The functional form of DataParallel: run once, without keeping a wrapper."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    wrapper = DataParallel(module, device_ids, output_device, dim)
    return wrapper(*inputs, **(module_kwargs or {}))
