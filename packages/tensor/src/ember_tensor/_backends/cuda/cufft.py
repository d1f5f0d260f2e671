"""cuFFT plans and calls for CUDA tensors, through nvmath-python's cuFFT bindings.

`_backends.cuda.fft` lays its operands out for cuFFT (the transformed dims last, C-contiguous,
at most three of them a call) and asks `execute`; it falls back to the host (NumPy's
pocketfft) when `available()` is False: nvmath-python (``pip install nvmath-python[cu12]``,
the package the cuBLAS products use) not importable or without a loadable libcufft, and
always under Numba's simulator.

The call: a batched plan over the basic data layout (``inembed``/``onembed`` NULL:
contiguous signals, one after another; a real-to-complex transform's complex side holds
n[-1] // 2 + 1 points along its last dim), made by ``cufftMakePlanMany64`` on a handle of
``cufftCreate``, run by the ``cufftExec*`` entry point of its type on the current stream.
cuFFT scales nothing (the caller does) and overwrites the input of complex-to-real
transforms (the caller passes a copy). Plans are cached by (device, type, shape, batch),
the least recently used of more than `PLAN_CACHE_SIZE` destroyed, as PyTorch's
`torch.backends.cuda.cufft_plan_cache` keeps them; cuFFT allocates each plan's work area
itself (outside ember's caching allocator).

Under the simulator `tests/test_cuda_cufft.py` checks these calls against cuFFT's
documented contract with a stand-in bindings module that computes what cuFFT would; its
`gpu` test runs cuFFT itself on a GPU.
"""
import collections
import threading

import numpy as np

from . import nvmath_bindings

__all__ = ["available", "handles", "execute", "clear_plans", "PLAN_CACHE_SIZE"]

# cufftType_t and the direction codes (cufft.h).
R2C, C2R, C2C = 0x2A, 0x2C, 0x29
D2Z, Z2D, Z2Z = 0x6A, 0x6C, 0x69
FORWARD, INVERSE = -1, 1

# (kind, input dtype name) -> the plan type; its exec entry point below.
_TYPES = {("c2c", "complex64"): C2C, ("c2c", "complex128"): Z2Z,
          ("r2c", "float32"): R2C, ("r2c", "float64"): D2Z,
          ("c2r", "complex64"): C2R, ("c2r", "complex128"): Z2D}
_EXEC = {C2C: "exec_c2c", Z2Z: "exec_z2z", R2C: "exec_r2c", D2Z: "exec_d2z", C2R: "exec_c2r", Z2D: "exec_z2d"}

PLAN_CACHE_SIZE = 64
_lock = threading.Lock()
_plans = collections.OrderedDict()  # (device, type, n, batch) -> cufftHandle


def _bindings():
    """nvmath's cuFFT bindings module (its library loaded: `get_version`), or None."""
    return nvmath_bindings.load("cufft", probe=lambda cufft: cufft.get_version())


def available():
    """Whether transforms go to cuFFT."""
    from .kernels.loops import SIMULATOR
    return not SIMULATOR and _bindings() is not None


def handles(kind, dtype):
    """Whether cuFFT computes transform `kind` ("c2c", "r2c", "c2r") of NumPy dtype `dtype`."""
    return (kind, np.dtype(dtype).name) in _TYPES


def _plan(cufft, device, fft_type, n, batch):
    """The cached plan of `fft_type` over signal shape `n` (a tuple), `batch` signals."""
    key = (device, fft_type, n, batch)
    with _lock:
        handle = _plans.get(key)
        if handle is not None:
            _plans.move_to_end(key)
            return handle
        handle = cufft.create()
        try:
            cufft.make_plan_many64(handle, len(n), list(n), 0, 1, 0, 0, 1, 0, fft_type, batch)
        except Exception:
            cufft.destroy(handle)
            raise
        _plans[key] = handle
        while len(_plans) > PLAN_CACHE_SIZE:
            _destroy(cufft, _plans.popitem(last=False)[1])
        return handle


def _destroy(cufft, handle):
    # A plan may still have transforms queued on some stream: let them finish first.
    from numba import cuda
    cuda.synchronize()
    cufft.destroy(handle)


def clear_plans():
    """Destroy every cached plan (`torch.backends.cuda.cufft_plan_cache.clear()`)."""
    cufft = _bindings()
    with _lock:
        while _plans:
            _destroy(cufft, _plans.popitem()[1])


def _stream_handle(stream):
    if not stream:
        return 0
    handle = stream.handle
    return int(getattr(handle, "value", handle) or 0)


def execute(kind, x, out, n, forward=True):
    """out = the unnormalized transform `kind` of the contiguous device array `x` over its
    trailing len(n) dims, of signal shape `n` (the real side's, for r2c/c2r); the other
    dims are the batch. `out` is contiguous, its trailing dims n (c2c, c2r) or n with
    n[-1] // 2 + 1 (r2c). c2r overwrites `x`. False when cuFFT cannot."""
    cufft = _bindings()
    fft_type = _TYPES.get((kind, x.dtype.name))
    if cufft is None or fft_type is None or len(n) > 3:
        return False
    from . import runtime
    from .arrays import ptr
    from .launch import LAUNCH_BLOCKING
    points = int(np.prod(n))
    batch = (out.size if kind == "c2r" else x.size) // points
    handle = _plan(cufft, runtime.current_index(), fft_type, tuple(int(s) for s in n), batch)
    with _lock:  # a plan's stream is its state: set and run it in one go
        cufft.set_stream(handle, _stream_handle(runtime.current_numba_stream()))
        run = getattr(cufft, _EXEC[fft_type])
        if kind == "c2c":
            run(handle, ptr(x), ptr(out), FORWARD if forward else INVERSE)
        else:
            run(handle, ptr(x), ptr(out))
    if LAUNCH_BLOCKING:
        from numba import cuda
        cuda.synchronize()
    return True
