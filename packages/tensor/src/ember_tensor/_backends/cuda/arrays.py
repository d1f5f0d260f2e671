"""Device arrays and views for the CUDA backend: the one place that differs under Numba's
CUDA simulator.

On a GPU a device array is Numba's `DeviceNDArray` and a view is a new one on the root
buffer's device memory (`gpu_data`) at a byte offset. Under the simulator
(NUMBA_ENABLE_CUDASIM=1) device arrays are NumPy arrays in a wrapper: `_SimArray` gives
them plain-tuple shapes and keeps views wrapped, and the simulator's shared arrays are
repaired (`_lock_simulated_shared_arrays`). Both branches give the same names: `ARRAY`, `alloc`, `upload`,
`download`, `restride`, `ptr`, `memory_of`.
Above them, the helpers every CUDA module uses (`is_c`, `flat`, `reinterpret`,
`broadcast_to`) and `empty`, which allocates through ember's caching allocator and counts
the memory when Numba's own allocator is in charge.
"""
import sys

import weakref

import ml_dtypes
import numpy as np
from numba import cuda

from . import allocator as _cuda_alloc
from . import runtime
from .kernels.loops import SIMULATOR

__all__ = ["ARRAY", "BF16", "UINT", "alloc", "upload", "download", "restride", "ptr", "memory_of", "is_array", "is_c", "flat",
           "reinterpret", "broadcast_to", "empty", "track"]


UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}  # a dtype's bits, by size
BF16 = np.dtype(ml_dtypes.bfloat16)


def _bits_type(dtype):
    """The unsigned integer type to move `dtype`'s elements as between host and GPU, or
    None: the buffer protocol that Numba's copies go through cannot export ml_dtypes'
    types (bfloat16: "cannot include dtype 'E' in a buffer", seen on an H100)."""
    return UINT[dtype.itemsize] if dtype.type.__module__.startswith("ml_dtypes") else None

if SIMULATOR:
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

    class _SimArray(FakeCUDAArray):
        """A simulator device array with a plain tuple shape whose views stay wrapped."""

        shape = property(lambda self: self._ary.shape)

        def reshape(self, *args, **kwargs):
            return _SimArray(self._ary.reshape(*args, **kwargs))

        def view(self, *args, **kwargs):
            return _SimArray(self._ary.view(*args, **kwargs))

        def __getitem__(self, idx):
            ret = self._ary[idx]
            return _SimArray(ret) if isinstance(ret, np.ndarray) else ret

    ARRAY = FakeCUDAArray

    def _lock_simulated_shared_arrays():
        """Make the simulator's `cuda.shared.array` safe for the threads of a block.

        The simulator keeps one array per call site and block, created on first call by
        whichever thread gets there first, but without a lock: two threads can both find
        none and each make its own, so a block reduction then merges values its threads
        never shared (seen as rare wrong sums in ember's row kernels). Creation under a
        lock gives every thread of the block the same array, as on a GPU.
        """
        import threading

        from numba.core import types
        from numba.cuda.simulator import kernelapi
        from numba.np import numpy_support
        shared = kernelapi.FakeCUDAShared
        if getattr(shared, "_ember_locked", False):
            return
        unlocked, lock = shared.array, threading.Lock()

        def array(self, shape, dtype, alignment=None):
            if shape == 0 or alignment is not None:  # dynamic shared memory: one buffer already
                return unlocked(self, shape, dtype, alignment)
            if isinstance(dtype, types.Type):
                dtype = numpy_support.as_dtype(dtype)
            caller = sys._getframe(1)  # the simulator's key: the call site in the kernel
            site = (caller.f_code.co_filename, caller.f_lineno)
            with lock:
                found = self._allocations.get(site)
                if found is None:
                    found = self._allocations[site] = np.empty(shape, dtype)
            return found

        shared.array, shared._ember_locked = array, True

    _lock_simulated_shared_arrays()

    def alloc(shape, dtype):
        return _SimArray(_cuda_alloc.sim_alloc(shape, dtype))

    def upload(host, stream=0):
        arr = alloc(host.shape, host.dtype)
        np.copyto(arr._ary, host)
        return arr

    def download(arr):
        return arr.copy_to_host()

    def restride(arr, shape, strides, byte_offset=0, dtype=None):
        base = arr._ary
        resized = dtype is not None and np.dtype(dtype).itemsize != base.itemsize
        if resized:
            # Reinterpret the (1-d, dense) buffer first: strides in the new dtype's bytes
            # would not be a valid view of the old one's elements (complex64 as float32 pairs).
            base = base.reshape(-1).view(dtype)
        if byte_offset:
            skip = byte_offset // base.itemsize
            base = np.lib.stride_tricks.as_strided(base, (skip + 1,), (base.itemsize,))[skip:]
        view = np.lib.stride_tricks.as_strided(base, tuple(shape), tuple(strides))
        return _SimArray(view if dtype is None or resized else view.view(dtype))

    def ptr(arr):
        return arr._ary.__array_interface__["data"][0]

    def memory_of(arr):
        return arr._ary

else:
    from numba.cuda.cudadrv.devicearray import DeviceNDArray

    ARRAY = DeviceNDArray

    def alloc(shape, dtype):
        return cuda.device_array(shape, dtype)

    def upload(host, stream=0):
        # to_device copies from `host` as it is: asynchronously on `stream` when host is pinned.
        bits = _bits_type(host.dtype)
        if bits is not None:
            return reinterpret(cuda.to_device(host.view(bits), stream=stream), host.dtype)
        return cuda.to_device(host, stream=stream)

    def download(arr):
        bits = _bits_type(arr.dtype)
        if bits is not None:
            return reinterpret(arr, bits).copy_to_host().view(arr.dtype)
        return arr.copy_to_host()

    def restride(arr, shape, strides, byte_offset=0, dtype=None):
        gpu_data = arr.gpu_data
        # An empty buffer has no address (NULL) to offset: Numba refuses to view it past 0.
        if byte_offset and getattr(gpu_data, "device_pointer_value", 1):
            gpu_data = gpu_data.view(byte_offset)
        return DeviceNDArray(tuple(shape), tuple(strides), arr.dtype if dtype is None else dtype,
                             gpu_data=gpu_data)

    def ptr(arr):
        return arr.device_ctypes_pointer.value or 0

    def memory_of(arr):
        return arr.gpu_data


# --- helpers over device arrays ------------------------------------------------------------

def is_array(x):
    """Whether `x` is a device array (not a host array or a scalar)."""
    return isinstance(x, ARRAY)


def is_c(arr):
    """C-contiguous with PyTorch's rule: strides of size-1 dims do not matter."""
    if arr.size == 0:
        return True
    expected = arr.dtype.itemsize
    for n, s in zip(reversed(arr.shape), reversed(arr.strides)):
        if n != 1:
            if s != expected:
                return False
            expected *= n
    return True


def flat(arr):
    """The 1-d view of a C-contiguous array."""
    if arr.ndim == 1 and arr.strides[0] == arr.dtype.itemsize:
        return arr
    return restride(arr, (arr.size,), (arr.dtype.itemsize,))


def reinterpret(arr, dtype):
    """The same elements read as `dtype` (same itemsize), keeping shape and strides."""
    return restride(arr, arr.shape, arr.strides, dtype=dtype)


def broadcast_to(data, shape):
    """A stride-0 view of `data` expanded to `shape` (no copy)."""
    shape = tuple(shape)
    lead = len(shape) - data.ndim
    strides = [0] * lead + [s if n == m else 0
                            for s, n, m in zip(data.strides, data.shape, shape[lead:])]
    return restride(data, shape, strides)


# --- memory -------------------------------------------------------------------------------
# Device memory comes from ember's caching allocator (`allocator`): on a GPU through the
# Numba EMM plugin that the runtime installs, under the simulator directly. Without the
# plugin (EMBER_CUDA_ALLOCATOR=numba, or numba.cuda used before ember) the pool only
# counts ember's allocations: allocated == reserved, nothing is cached.

def track(arr):
    """Count `arr` in its device's memory pool when Numba's allocator made it (see `empty`)."""
    nbytes = arr.size * arr.dtype.itemsize
    if nbytes and not SIMULATOR and not runtime.caching_allocator_installed():
        size = _cuda_alloc.round_size(nbytes)
        p = _cuda_alloc.pool(runtime.current_index())
        with p.lock:
            p.num_alloc += 1
            p.allocated += size
            p.reserved += size
            p.peak_allocated = max(p.peak_allocated, p.allocated)
            p.peak_reserved = max(p.peak_reserved, p.reserved)
        weakref.finalize(memory_of(arr), _untrack, p, size)
    return arr


def _untrack(p, size):
    with p.lock:
        p.allocated -= size
        p.reserved -= size
        p.num_free += 1


def empty(shape, np_dtype):
    """Uninitialised contiguous device storage for `shape` on the current device."""
    return track(alloc(tuple(shape), np.dtype(np_dtype)))
