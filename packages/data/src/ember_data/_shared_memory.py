"""Moving batches from worker processes to the main process through POSIX shared memory.

A worker writes all the tensors of one batch into one shared-memory segment (a file in
``/dev/shm``, what ``multiprocessing.shared_memory`` uses on Linux) and sends only a small
description through the result queue. The main process maps the segment, unlinks its
name at once and wraps the mapping in NumPy arrays: the batch's tensors *are* the shared
pages (no copy, no pickling of the data), and the memory is freed when they are.

Segment names start with a per-iterator prefix, so whatever a dead worker or an
abandoned epoch left behind is found and unlinked at shutdown (``unlink_leftovers``).
The stdlib ``SharedMemory`` class is not used because on Python < 3.13 it registers every
segment with a resource tracker that would unlink it (and warn) when the *worker* exits.
"""
import collections.abc
import glob
import mmap
import os

import numpy as np

import ember_tensor

__all__ = ["SHM_DIR", "available", "pack_batch", "unpack_batch", "unlink_leftovers"]

SHM_DIR = "/dev/shm"
_ALIGN = 64


def available():
    """Whether POSIX shared memory is reachable as files (Linux); otherwise batches are pickled."""
    return os.path.isdir(SHM_DIR) and os.access(SHM_DIR, os.W_OK)


class SharedTensor:
    """Where one tensor of a batch lies in the batch's segment."""

    __slots__ = ("offset", "shape", "dtype")

    def __init__(self, offset, shape, dtype):
        self.offset, self.shape, self.dtype = offset, shape, dtype

    def __reduce__(self):
        return SharedTensor, (self.offset, self.shape, self.dtype)


def _map_structure(fn, data):
    """Apply ``fn`` to every leaf of nested dicts, lists, tuples and namedtuples."""
    if isinstance(data, collections.abc.Mapping):
        mapped = {k: _map_structure(fn, v) for k, v in data.items()}
        try:
            return type(data)(mapped)
        except TypeError:
            return mapped
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(_map_structure(fn, v) for v in data))
    if isinstance(data, (list, tuple)):
        return type(data)(_map_structure(fn, v) for v in data)
    return fn(data)


def pack_batch(batch, name):
    """Write the CPU tensors of ``batch`` into a new segment ``name``.

    Returns ``(segment_size, description)``; size 0 means nothing was written (no tensors).
    """
    arrays = []

    def collect(leaf):
        if isinstance(leaf, ember_tensor.Tensor) and leaf.device.type == "cpu":
            arrays.append(np.ascontiguousarray(leaf.detach().numpy()))
        return leaf

    _map_structure(collect, batch)
    if not arrays:
        return 0, batch
    offsets, size = [], 0
    for a in arrays:
        offsets.append(size)
        size += -(-max(a.nbytes, 1) // _ALIGN) * _ALIGN
    fd = os.open(os.path.join(SHM_DIR, name), os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
    try:
        os.ftruncate(fd, size)
        with mmap.mmap(fd, size) as segment:
            for a, offset in zip(arrays, offsets):
                np.frombuffer(segment, dtype=a.dtype, count=a.size, offset=offset)[:] = a.reshape(-1)
    finally:
        os.close(fd)
    position = iter(zip(arrays, offsets))

    def describe(leaf):
        if isinstance(leaf, ember_tensor.Tensor) and leaf.device.type == "cpu":
            a, offset = next(position)
            return SharedTensor(offset, a.shape, a.dtype)
        return leaf

    return size, _map_structure(describe, batch)


def unpack_batch(name, size, description):
    """Map segment ``name``, unlink it, and rebuild the batch with tensors over the mapping."""
    if size == 0:
        return description
    path = os.path.join(SHM_DIR, name)
    fd = os.open(path, os.O_RDWR)
    try:
        segment = mmap.mmap(fd, size)
    finally:
        os.close(fd)
        os.unlink(path)  # the mapping stays valid; the name must not outlive this call

    def rebuild(leaf):
        if isinstance(leaf, SharedTensor):
            count = int(np.prod(leaf.shape))
            array = np.frombuffer(segment, dtype=leaf.dtype, count=count, offset=leaf.offset)
            return ember_tensor.from_numpy(array.reshape(leaf.shape))
        return leaf

    return _map_structure(rebuild, description)


def unlink_leftovers(prefix):
    """Unlink every segment whose name starts with ``prefix``; returns how many there were."""
    names = glob.glob(os.path.join(SHM_DIR, glob.escape(prefix) + "*"))
    for path in names:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
    return len(names)
