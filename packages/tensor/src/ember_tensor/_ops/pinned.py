"""Pinned (page-locked) host memory: Tensor.pin_memory() and Tensor.is_pinned().

Copies from pinned memory to a GPU can run asynchronously (``x.cuda(non_blocking=True)``
queues the copy on the current stream and returns). The memory comes from the CUDA
backend (`_backends.cuda.storage.pinned_empty`); under Numba's simulator it is ordinary memory that
ember marks as pinned, so the same code paths run.
"""
from .. import _backends
from .._device import CPU, device as _device_cls
from .._tensor import Tensor

__all__ = ["pin_memory", "is_pinned"]


def _cuda_backend():
    from .. import cuda
    if not cuda.is_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")
    return _backends.get(_device_cls("cuda", cuda.current_device()))


def pin_memory(self, device=None):
    """A copy of this CPU tensor in pinned host memory (self when it is pinned already)."""
    if self._device != CPU:
        raise RuntimeError(f"cannot pin '{self.type()}' only dense CPU tensors can be pinned")
    backend = _cuda_backend()
    if backend.storage.is_pinned(self._data):
        return self
    data = backend.storage.pinned_empty(tuple(self._data.shape), self._data.dtype)
    data[...] = self._data
    return Tensor._wrap(data, self._dtype, self._device)


def is_pinned(self, device=None):
    """Whether this tensor's memory is pinned host memory (False without CUDA)."""
    if self._device != CPU:  # only host memory can be pinned
        return False
    from .. import cuda
    if not cuda.is_initialized():  # nothing can have been pinned yet
        return False
    return _cuda_backend().storage.is_pinned(self._data)
