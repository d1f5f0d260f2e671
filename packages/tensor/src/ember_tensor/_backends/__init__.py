"""Device -> backend module. The one place that chooses kernels by device type.

A backend module offers the same functions (empty, as_strided, unary, binary, ternary,
copy_, fill_, to_numpy, from_numpy, reductions ...) over its own array type. The CUDA
backend is imported only when a CUDA tensor is first made, so importing ember_tensor
never loads numba.cuda.
"""
import importlib

from .cpu import storage as _cpu

_BACKENDS = {"cpu": _cpu}
_MODULES = {"cuda": ".cuda.storage"}


def get(device):
    """The backend module for `device` (an ember device)."""
    mod = _BACKENDS.get(device.type)
    if mod is None:
        mod = _BACKENDS[device.type] = importlib.import_module(_MODULES[device.type], __package__)
    if device.index is None:  # the CPU (and an unnumbered 'cuda': the current GPU)
        return mod
    # With several GPUs, ops on cuda:i run with GPU i current (its memory, its stream);
    # with one, on_device returns the module itself. (Test doubles may not bind devices.)
    on_device = getattr(mod, "on_device", None)
    return mod if on_device is None else on_device(device.index)
