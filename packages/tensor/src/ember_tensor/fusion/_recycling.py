"""A fused program's previous result, whose memory its next call may take when nothing
holds it any more (`FusedElementwise.__call__(recycle=True)`).

Why: a result too large for malloc's heap (glibc serves blocks from 32 MiB, ember's
threshold, with a fresh ``mmap``) is new memory on every call, and the kernel writing it
pays a page fault per 4 KiB page: `relu(x * y + z)` on 1e7 float32 took 1.74x the time
to stream its bytes once, ~2.8 ms of it first-touch faults. PyTorch's GPU allocator keeps
freed blocks for the same reason; here one block per program is kept, and only once its
result is dead.

When is the memory free: the result's storage object is gone (a weak reference: no
tensor or view of it is left, nor an autograd node holding one) and nothing but this
holder refers to the array itself (`sys.getrefcount`, compared with the count an array
held by this holder alone has in this interpreter): a NumPy array handed out by
``numpy()``, ``__array__`` or a view made of it refers to it, and so keeps it. A spare is
taken out (a list's ``pop``, atomic under the GIL) before it is checked, so two threads
calling one program never share it.
"""
import sys
import weakref

__all__ = []

# Results from this size are kept (smaller ones come from malloc's free lists cheaply).
RECYCLE_MIN_BYTES = 1 << 20


class Spare:
    """The memory of a dead (or dying) result: its backend array, its device, and a weak
    reference to its storage object."""

    __slots__ = ("array", "device", "storage")

    def __init__(self, array, device, storage):
        self.array = array
        self.device = device
        self.storage = weakref.ref(storage)

    def held_elsewhere(self):
        """Whether anything but this spare refers to the memory."""
        return self.storage() is not None or sys.getrefcount(self.array) != _SOLE_REFERENCE


def _probe():
    # The count `held_elsewhere` sees for an array this holder alone refers to.
    spare = Spare.__new__(Spare)
    spare.array = bytearray(1)
    return sys.getrefcount(spare.array)


_SOLE_REFERENCE = _probe()


def take(spares, shape, dtype, device):
    """The array of a spare in `spares` (a list, emptied) for a result of `shape`, backend
    `dtype` and `device` (a program runs on any device), when nothing else holds it; else
    None."""
    try:
        spare = spares.pop()
    except IndexError:
        return None
    # (checked before the array is bound to a name here, which would count as a holder)
    if spare.held_elsewhere() or spare.device != device or spare.array.shape != shape or \
            spare.array.dtype != dtype:
        return None
    return spare.array


def keep(spares, result):
    """Keep `result`'s memory (a tensor just made) for a later call, when it is large."""
    array = result._data
    if array.nbytes >= RECYCLE_MIN_BYTES:
        spares.append(Spare(array, result._device, result._storage))
