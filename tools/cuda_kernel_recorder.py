"""pytest plugin: record every CUDA kernel the simulator launches, with its argument types.

Loaded by tools/cuda_ptx_check.py, or by the tensor tox env around its own test run
(``-p cuda_kernel_recorder``, tools/ on PYTHONPATH). Under Numba's CUDA
simulator kernels run as plain Python, so code that a real GPU's compiler would reject
(an unsupported NumPy call, a type that does not unify) passes there unnoticed. This
records (module, its source file, qualified name, Numba argument types) of each launch so that the check
can then compile exactly those specialisations to PTX with the real CUDA compiler (NVVM
needs no GPU). The records go to the pickle file named by EMBER_KERNEL_RECORD.
"""
import os
import pickle

# First, as in a user's program: its process settings (OpenBLAS's kernels, the vector width
# of Numba's loops) must be made before NumPy and Numba are imported.
import ember_tensor  # noqa: F401
import numba  # noqa: E402
import numpy as np  # noqa: E402

_records = set()


def _host_value(arg):
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray
    if isinstance(arg, tuple):  # a tuple of arrays (a multi-tensor launch's table)
        return tuple(_host_value(a) for a in arg)
    if isinstance(arg, FakeCUDAArray):
        arg = arg._ary
    if isinstance(arg, np.ndarray) and not arg.flags.writeable:
        arg = arg.copy()  # a device array is never typed read-only
    return arg


def _arg_type(arg):
    return numba.typeof(_host_value(arg))


def pytest_configure(config):
    # Importing the simulator imports numba.cuda, which picks simulator or GPU for good
    # on its first import: make that the simulator (what this plugin records).
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
    from numba.cuda.simulator import kernel

    original = kernel.FakeCUDAKernel.__call__

    def recording_call(self, *args):
        if not self._device:
            fn = self.fn
            try:
                types = tuple(_arg_type(a) for a in args)
            except Exception:  # an argument Numba cannot type: the real launch would fail too
                types = None
            _records.add((fn.__module__, fn.__code__.co_filename, fn.__qualname__, types))
        return original(self, *args)

    kernel.FakeCUDAKernel.__call__ = recording_call


def pytest_unconfigure(config):
    path = os.environ.get("EMBER_KERNEL_RECORD")
    if path:  # this session's launches only: a file left by an earlier run is replaced
        with open(path, "wb") as fh:
            pickle.dump(_records, fh)
