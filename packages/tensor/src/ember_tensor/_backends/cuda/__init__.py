"""The CUDA backend: Numba CUDA device arrays and `numba.cuda.jit` kernels.

The same families as the CPU backend (`_backends.cpu`), with the same function names
over device arrays; each family module loads on first use. `_backends.get` calls
`ensure_available` before handing this backend to an op, so a machine without a GPU
gets ember's "no CUDA" error, never an ImportError from numba.cuda; the modules
themselves import without a GPU (the PTX check compiles their kernels with no driver). `on_device(i)` is this backend with every call
made with GPU i current, for ops on cuda:i when there are several GPUs.

Under Numba's simulator (NUMBA_ENABLE_CUDASIM=1) device arrays are NumPy arrays in a
wrapper (`arrays`), and kernels launch as one small block so that tests stay fast.
"""
import importlib
import sys
import types

from . import runtime
from .._families import FAMILIES

__all__ = ["FAMILIES", "ATOMIC_ACCUMULATION", "on_device", "current_index", "ensure_available"]

# Whether this backend's accumulating kernels add with atomics, in an order that varies
# from run to run (the ops PyTorch refuses under use_deterministic_algorithms): as PyTorch's.
ATOMIC_ACCUMULATION = True

current_index = runtime.current_index  # the index of the current GPU


def ensure_available():
    """Raise ember's "no CUDA" error unless CUDA (a GPU or the simulator) is usable."""
    runtime.lazy_init()


def __getattr__(name):
    if name in FAMILIES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _OnDevice:
    """A backend family (or the backend) with each call run on GPU `index` (made current)."""

    def __init__(self, target, index):
        self._target = target
        self._index = index

    def __getattr__(self, name):
        value = getattr(self._target, name)
        if isinstance(value, types.ModuleType):
            bound = _OnDevice(value, self._index)
        elif callable(value):
            index = self._index

            def bound(*args, **kwargs):
                with runtime.device_context(index):
                    return value(*args, **kwargs)
            bound.__name__ = name
        else:
            return value
        setattr(self, name, bound)
        return bound


_bound = {}


def on_device(index):
    """The backend for ops on cuda:`index`: this package itself when there is one GPU."""
    backend = _bound.get(index)
    if backend is None:
        count = runtime.device_count()
        if not 0 <= index < count:
            raise RuntimeError("CUDA error: invalid device ordinal")
        backend = _bound[index] = _OnDevice(sys.modules[__name__], index) if count > 1 else sys.modules[__name__]
    return backend
