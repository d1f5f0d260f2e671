"""Backends: the code below the ops that computes on one kind of device.

`get(device)` is the one place that chooses code by device type. A backend is a package
of family modules (`_families.FAMILIES`: storage, elementwise, reduction, matmul, ...),
each taking and returning arrays of its device (NumPy arrays, Numba CUDA device arrays)
and never a Tensor: backends import no op, no Tensor and no public module. The CUDA
backend loads on the first CUDA tensor, so importing ember_tensor never loads numba.cuda.

    _ops/<family>.py           checks, PyTorch's errors, dtype and shape plan, then
    get(device).<family>.fn    arrays in, arrays out: cpu/<family>.py, cuda/<family>.py
    <device>/kernels/<family>  the compiled loops (Numba njit, numba.cuda.jit)
"""
import importlib

__all__ = ["get", "resolve"]

_PACKAGES = {"cpu": ".cpu", "cuda": ".cuda"}
_loaded = {}


def get(device):
    """The backend package for `device` (an ember device): its families are attributes."""
    backend = _loaded.get(device.type)
    if backend is None:
        if device.type not in _PACKAGES:
            raise RuntimeError(f"ember has no '{device.type}' backend: tensors live on the CPU or on CUDA "
                               f"(a device('{device.type}') object can be made and compared, nothing more)")
        backend = importlib.import_module(_PACKAGES[device.type], __package__)
        ensure_available = getattr(backend, "ensure_available", None)
        if ensure_available is not None:  # e.g. CUDA: ember's error, not numba's, without a GPU
            ensure_available()
        _loaded[device.type] = backend
    if device.index is None:  # the CPU (and an unnumbered 'cuda': the current GPU)
        return backend
    # With several GPUs, ops on cuda:i run with GPU i current (its memory, its stream);
    # with one, on_device returns the backend itself. (Test doubles may not bind devices.)
    on_device = getattr(backend, "on_device", None)
    return backend if on_device is None else on_device(device.index)


def resolve(device):
    """`device` with its index filled in from its backend's current device ('cuda' ->
    'cuda:N'); a device without indices (the CPU) as it is."""
    if device.index is not None:
        return device
    backend = _loaded.get(device.type) or get(device)
    current_index = getattr(backend, "current_index", None)
    return device if current_index is None else type(device)(device.type, current_index())
