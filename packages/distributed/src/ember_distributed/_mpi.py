"""MPI, imported lazily, and the bridge between ember tensors and MPI buffers.

``import mpi4py.MPI`` initialises MPI, which costs time and, for a process that was not
started by ``mpiexec``, creates a singleton MPI world: ember_distributed imports it only
when a process group is made. Tensors travel as NumPy arrays: a contiguous CPU tensor is
sent from (and received into) its own memory; anything else (a non-contiguous or CUDA
tensor) is staged through a contiguous host copy and written back after the operation.
"""

import atexit
import ctypes
import importlib.util

import numpy as np

import ember_tensor

from . import _health

__all__ = ["mpi", "HostBuffer", "reduction_dtype"]

_MPI = None


def mpi():
    """The mpi4py.MPI module, imported (and MPI initialised) on first use."""
    global _MPI
    if _MPI is None:
        import mpi4py

        # ember checks for errors itself (timeouts, mismatched calls): let MPI return error
        # codes as exceptions instead of aborting the whole job.
        mpi4py.rc.errors = "exception"
        # MPI_Finalize waits for every rank: a survivor of a failed peer would hang in it.
        # ember finalizes at exit itself, and only when no failure was seen.
        mpi4py.rc.finalize = False
        _init_releasing_the_gil()
        from mpi4py import MPI

        if _initialized_here:  # (mpi4py sets this itself when its import initialises MPI)
            MPI.COMM_WORLD.Set_errhandler(MPI.ERRORS_RETURN)
            MPI.COMM_SELF.Set_errhandler(MPI.ERRORS_RETURN)
        _MPI = MPI
        atexit.register(_finalize)
    return _MPI


_initialized_here = False
_MPI_THREAD_MULTIPLE = 3  # mpi.h's value in MPICH and Open MPI (mpi4py's default level)


def _init_releasing_the_gil():
    """MPI_Init_thread through ctypes, which lets go of the GIL during the call, before
    mpi4py.MPI is imported (its import initialises MPI holding the GIL).

    MPI_Init returns only once every rank has called it. Rank 0 serves the job's store from
    Python threads; had its MPI_Init held the GIL, a rank still waiting for the store's
    answer to the rendezvous could never get it, nor reach its own MPI_Init: both would wait
    forever (seen under load: rank 0 spinning in MPI_Init, rank 1 in the store's WAIT). The
    symbols are looked up through mpi4py's extension module, which links the MPI library.
    Anything unexpected leaves the initialisation to mpi4py's import, as before.
    """
    global _initialized_here
    try:
        library = ctypes.CDLL(importlib.util.find_spec("mpi4py.MPI").origin)
        flag = ctypes.c_int(0)
        if library.MPI_Initialized(ctypes.byref(flag)) != 0 or flag.value:
            return
        provided = ctypes.c_int(0)
        _initialized_here = library.MPI_Init_thread(None, None, _MPI_THREAD_MULTIPLE, ctypes.byref(provided)) == 0
    except (OSError, AttributeError, TypeError):
        return


def _finalize():
    _health.stop()  # say goodbye while rank 0, which serves the store, is still listening
    if _MPI.Is_initialized() and not _MPI.Is_finalized() and _health.ready_to_finalize():
        _MPI.Finalize()


# Reductions run in a dtype MPI can reduce: NumPy's float16 and ml_dtypes' bfloat16 have
# no MPI reduction, so they reduce in float32 (more accurate than PyTorch's gloo, which
# adds in half precision) and are cast back.
_REDUCE_AS = {"float16": np.float32, "bfloat16": np.float32}


def reduction_dtype(dtype):
    """The NumPy dtype a tensor of ``dtype`` is reduced in."""
    return _REDUCE_AS.get(dtype.name if hasattr(dtype, "name") else str(dtype))


class HostBuffer:
    """A tensor's data as a contiguous host NumPy array, written back on ``finish``.

    Args:
        tensor: the ember tensor to read and/or write.
        for_reduction: give the array in a dtype MPI can reduce (float16 -> float32).
        read: fill the array from the tensor (False for pure outputs).
    """

    __slots__ = ("tensor", "array", "_direct")

    def __init__(self, tensor, for_reduction=False, read=True):
        self.tensor = tensor
        direct = tensor.device.type == "cpu" and tensor.is_contiguous()
        if direct:
            array = tensor.detach().numpy()
        elif read:
            array = tensor.detach().cpu().contiguous().numpy()
        else:
            array = np.empty(tuple(tensor.shape), dtype=tensor.dtype.np)
        widen = reduction_dtype(tensor.dtype) if for_reduction else None
        if widen is not None:
            array = array.astype(widen)
            direct = False
        self.array = array
        self._direct = direct

    def finish(self):
        """Write the array back into the tensor when it is not the tensor's own memory."""
        if not self._direct:
            values = np.ascontiguousarray(self.array.astype(self.tensor.dtype.np, copy=False))
            self.tensor.detach().copy_(ember_tensor.from_numpy(values))
        return self.tensor
