"""Host memory that other processes can map: what `Tensor.share_memory_()` moves a CPU
tensor's storage into, and what torch.multiprocessing sends instead of a copy.

A segment is an anonymous file (``memfd_create`` on Linux, else a temporary file
unlinked at once) mapped MAP_SHARED, so:
- a forked child inherits the mapping: writes on either side are seen by the other;
- a spawned child, or any process a Queue reaches, gets the file's descriptor
  (multiprocessing passes it over a Unix socket) and maps the same pages;
- nothing is left behind: the memory goes when the last mapping and descriptor close,
  even after a crash (no named segment to clean up).

Each process keeps, for every segment it maps, the descriptor that lets it send the
segment on; the entry goes with the mapping.
"""
import mmap
import os
import tempfile
import weakref

import numpy as np

__all__ = ["share", "is_shared", "descriptor_of", "attach"]

# id(mmap) -> file descriptor of the segment, for the segments mapped in this process.
_DESCRIPTORS = {}


def _anonymous_file(nbytes):
    """A descriptor of a new file of `nbytes` bytes that has no name in any folder."""
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("ember-tensor", os.MFD_CLOEXEC)
    else:
        folder = "/dev/shm" if os.path.isdir("/dev/shm") else None
        fd, path = tempfile.mkstemp(prefix="ember-tensor-", dir=folder)
        os.unlink(path)
    os.ftruncate(fd, max(nbytes, 1))  # mmap refuses an empty length
    return fd


def _map(fd, nbytes):
    """Map segment `fd` and remember its descriptor for as long as the mapping lives."""
    mapping = mmap.mmap(fd, max(nbytes, 1), mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
    key = id(mapping)
    _DESCRIPTORS[key] = fd
    weakref.finalize(mapping, _forget, key, fd)
    return mapping


def _forget(key, fd):
    _DESCRIPTORS.pop(key, None)
    os.close(fd)


def _mapping_of(arr):
    """The shared mapping under `arr` (following its chain of bases), or None."""
    base = arr
    while base is not None:
        if isinstance(base, mmap.mmap):
            return base if id(base) in _DESCRIPTORS else None
        base = getattr(base, "base", None) if not isinstance(base, memoryview) else base.obj
    return None


def share(buf):
    """A copy of flat array `buf` in a new shared segment (`buf` itself when it is in one)."""
    if is_shared(buf):
        return buf
    nbytes = buf.size * buf.itemsize
    shared = np.frombuffer(_map(_anonymous_file(nbytes), nbytes), dtype=buf.dtype, count=buf.size)
    shared[...] = buf
    return shared


def is_shared(arr):
    """Whether `arr` views a shared segment."""
    return _mapping_of(arr) is not None


def descriptor_of(arr):
    """(file descriptor, byte length) of the shared segment under `arr`."""
    mapping = _mapping_of(arr)
    if mapping is None:
        raise ValueError("the array is not in shared memory")
    return _DESCRIPTORS[id(mapping)], len(mapping)


def attach(fd, nbytes, size, dtype):
    """The flat array of `size` elements of `dtype` over a segment another process sent
    (this process now owns `fd`: it is closed when the array's last view goes)."""
    return np.frombuffer(_map(fd, nbytes), dtype=dtype, count=size)
