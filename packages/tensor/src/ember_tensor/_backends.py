"""Device -> backend module. The one place that chooses kernels by device type.

A backend module offers the same functions (empty, as_strided, unary, binary, ternary,
copy_, fill_, to_numpy, from_numpy, reductions ...) over its own array type. The CUDA
backend is imported only when a CUDA tensor is first made, so importing ember_tensor
never loads numba.cuda.
"""
import importlib

from . import _cpu

_BACKENDS = {"cpu": _cpu}
_MODULES = {"cuda": "._cuda"}


def get(device):
    """The backend module for `device` (an ember device)."""
    mod = _BACKENDS.get(device.type)
    if mod is None:
        mod = _BACKENDS[device.type] = importlib.import_module(_MODULES[device.type], __package__)
    return mod
