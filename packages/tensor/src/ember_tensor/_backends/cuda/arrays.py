"""Device arrays and views for the CUDA backend: the one place that differs under Numba's
CUDA simulator.

On a GPU a device array is Numba's `DeviceNDArray` and a view is a new one on the root
buffer's device memory (`gpu_data`) at a byte offset. Under the simulator
(NUMBA_ENABLE_CUDASIM=1) device arrays are NumPy arrays in a wrapper: `_SimArray` gives
them plain-tuple shapes and keeps views wrapped, and the simulator's shared arrays are
repaired (`_lock_simulated_shared_arrays`). Both branches give `_backends.cuda.storage` the same names:
`_ARRAY`, `_alloc`, `_upload`, `_restride`, `_ptr`, `_memory_of`.
"""
import sys

import numpy as np
from numba import cuda

from . import allocator as _cuda_alloc
from .kernels.loops import SIMULATOR

__all__ = ["_ARRAY", "_alloc", "_upload", "_restride", "_ptr", "_memory_of"]


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

    _ARRAY = FakeCUDAArray

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

    def _alloc(shape, dtype):
        return _SimArray(_cuda_alloc.sim_alloc(shape, dtype))

    def _upload(host, stream=0):
        arr = _alloc(host.shape, host.dtype)
        np.copyto(arr._ary, host)
        return arr

    def _restride(arr, shape, strides, byte_offset=0, dtype=None):
        base = arr._ary
        if byte_offset:
            skip = byte_offset // base.itemsize
            base = np.lib.stride_tricks.as_strided(base, (skip + 1,), (base.itemsize,))[skip:]
        view = np.lib.stride_tricks.as_strided(base, tuple(shape), tuple(strides))
        return _SimArray(view if dtype is None else view.view(dtype))

    def _ptr(arr):
        return arr._ary.__array_interface__["data"][0]

    def _memory_of(arr):
        return arr._ary

else:
    from numba.cuda.cudadrv.devicearray import DeviceNDArray

    _ARRAY = DeviceNDArray

    def _alloc(shape, dtype):
        return cuda.device_array(shape, dtype)

    def _upload(host, stream=0):
        # to_device copies from `host` as it is: asynchronously on `stream` when host is pinned.
        return cuda.to_device(host, stream=stream)

    def _restride(arr, shape, strides, byte_offset=0, dtype=None):
        gpu_data = arr.gpu_data.view(byte_offset) if byte_offset else arr.gpu_data
        return DeviceNDArray(tuple(shape), tuple(strides), arr.dtype if dtype is None else dtype,
                             gpu_data=gpu_data)

    def _ptr(arr):
        return arr.device_ctypes_pointer.value or 0

    def _memory_of(arr):
        return arr.gpu_data
