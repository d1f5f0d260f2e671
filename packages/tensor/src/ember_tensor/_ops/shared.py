"""Shared host memory: Tensor.share_memory_() and Tensor.is_shared().

`share_memory_` moves a CPU tensor's storage into a segment other processes can map
(`_backends.cpu.shared_memory`); torch.multiprocessing then sends the segment, not a
copy, and a forked child writes into the same pages. A CUDA tensor is left as it is, as
in PyTorch (ember has no CUDA IPC: sending one to another process copies it).
"""
from .._backends.cpu import shared_memory, storage as cpu_storage
from .._device import CPU
from .._tensor import _contiguous_buffer

__all__ = ["share_memory_", "is_shared"]


def share_memory_(self):
    """Move this tensor's storage to shared memory (once; a no-op on CUDA). Returns self.

    Like PyTorch this moves the storage, in place: this tensor keeps its identity, shape,
    strides and values. Other tensor objects made earlier over the same storage (a view, a
    ``.data`` alias) keep the private memory: move the base tensor before taking views.
    """
    if self._device != CPU or shared_memory.is_shared(self._storage.buf):
        return self
    old = _contiguous_buffer(self._storage.buf)  # the storage's memory as one flat span
    offset = cpu_storage.offset_of(self._data, old)
    shared = shared_memory.share(old)
    self._storage.buf = shared
    self._data = cpu_storage.as_strided(shared, tuple(self._data.shape), self.stride(), offset)
    self._offset = offset
    return self


def is_shared(self):
    """Whether this tensor's storage is in shared memory (CUDA tensors: True, as in PyTorch)."""
    if self._device != CPU:
        return True
    return shared_memory.is_shared(self._storage.buf)
