"""Shared plumbing of the fused optimizer ops (`fused_optim.py`): tensors as the 1-d
contiguous arrays of the compute dtype the kernels take (views where possible, copies
written back where not: half types, strided tensors), AMP's grad_scale/found_inf on the
host and on the device, version bumps, and the lazily imported kernel modules."""
import importlib

import numpy as np

from .. import _backends
from .. import _dtype as D

__all__ = ["kernel_module", "cpu_views", "FlatOperands", "compute_dtype", "bump_versions",
           "host_amp_values", "unscale_on_host", "device_amp_arrays", "placeholder"]

_FLOAT32 = np.dtype(np.float32)
_HALF_TYPES = (D.float16, D.bfloat16)

_KERNEL_MODULES = {}


def kernel_module(name):
    """Kernel module ``_backends.<name>``, imported on first use (it loads Numba)."""
    module = _KERNEL_MODULES.get(name)
    if module is None:
        module = _KERNEL_MODULES[name] = importlib.import_module(f"ember_tensor._backends.{name}")
    return module


def cpu_views(compute, tensors):
    """1-d views of CPU tensors that all are contiguous arrays of dtype ``compute``, else None."""
    views = []
    for t in tensors:
        data = t._data
        if data.dtype != compute or not data.flags.c_contiguous:
            return None
        views.append(data if data.ndim == 1 else data.reshape(-1))
    return views


class FlatOperands:
    """Hands the kernels 1-d contiguous arrays of the compute dtype for tensors: views where
    the tensor already is one, else copies that `write_back` copies into the tensor."""

    def __init__(self, device, compute_dtype):
        self.backend = _backends.get(device)
        self.on_cuda = device.type == "cuda"
        self.compute = compute_dtype
        self.copies = []

    def __call__(self, t, written=True):
        data = t._data
        if data.dtype == self.compute and self.backend.storage.is_contiguous(data):
            return self._flat(data)
        if self.on_cuda:
            work = self.backend.storage.astype(data, self.compute)  # on the device, never via the host
        else:
            work = np.array(data, dtype=self.compute, order="C")
        if written:
            self.copies.append((data, work))
        return self._flat(work)

    def _flat(self, data):
        return self.backend.storage.flat(data) if self.on_cuda else data.reshape(-1)

    def write_back(self):
        for data, work in self.copies:
            self.backend.storage.copy_(data, work)
        self.copies.clear()


def compute_dtype(dtype):
    return _FLOAT32 if dtype in _HALF_TYPES else dtype.np


def bump_versions(tensors):
    for t in tensors:
        if t is not None:
            t._bump_version()


def host_amp_values(grad_scale, found_inf):
    """(skip the step?, the scale or None) on the CPU path, where reading them is free."""
    skip = found_inf is not None and found_inf.item() == 1.0
    return skip, (None if grad_scale is None else grad_scale.item())


def unscale_on_host(operands, grad, scale):
    g = operands(grad)
    np.divide(g, g.dtype.type(scale), out=g)
    return g


def device_amp_arrays(backend, device, grad_scale, found_inf):
    """Device arrays for grad_scale/found_inf (a placeholder when absent) and their flag bits."""
    kernels = kernel_module("cuda.kernels.fused_optim")
    flags, arrays = 0, []
    for t, bit in ((grad_scale, kernels.HAS_GRAD_SCALE), (found_inf, kernels.HAS_FOUND_INF)):
        if t is None:
            arrays.append(placeholder(backend, device))
            continue
        flags |= bit
        if t._device == device:
            arrays.append(backend.storage.flat(t._data))
        else:  # a host (or other GPU's) value: uploaded, never read back
            arrays.append(backend.storage.from_numpy(np.asarray(t._host_numpy(), np.float32).reshape(1)))
    return flags, arrays


_PLACEHOLDERS = {}


def placeholder(backend, device):
    """A 1-element float32 device array passed where a kernel argument is absent."""
    arr = _PLACEHOLDERS.get(device)
    if arr is None:
        arr = _PLACEHOLDERS[device] = backend.storage.empty((1,), np.float32)
        backend.storage.fill_(arr, 0.0)
    return arr
