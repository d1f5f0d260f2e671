"""The CUDA runtime state below the ops: is CUDA usable, how many devices, which one is
current on this thread, which stream ember's kernels launch on, the caching allocator.

The public ``ember_tensor.cuda`` (PyTorch's ``torch.cuda``) is a thin layer over this
module; backend modules use it directly and so never import a public module.

Importing this module is cheap and never fails: numba.cuda is loaded on the first call
that needs a GPU (`lazy_init`). Without a usable GPU, `is_available()` is False (quickly:
it does not load numba.cuda when no driver library exists) and anything that needs a GPU
raises `CudaUnavailableError`. With ``NUMBA_ENABLE_CUDASIM=1`` in the environment, Numba's
CUDA simulator stands in for one GPU, or for ``EMBER_CUDASIM_DEVICES=N`` GPUs.
"""
import contextlib
import ctypes
import importlib.util
import os
import threading

__all__ = ["CudaUnavailableError", "lazy_init", "is_available", "is_initialized", "simulating", "device_count",
           "current_index", "check_index", "set_device", "device_context", "thread_streams",
           "current_numba_stream", "caching_allocator_installed", "install_caching_allocator"]

class CudaUnavailableError(RuntimeError, AssertionError):
    """Raised when an op needs a GPU and ember has none to give it.

    Both a RuntimeError and an AssertionError: PyTorch raises the latter in CPU-only
    builds ("Torch not compiled with CUDA enabled") and the former when no driver is found.
    """


_numba_cuda = None  # the numba.cuda module, once loaded
_init_error = None  # the reason CUDA is unavailable, once known
_init_lock = threading.Lock()


def _simulator_requested():
    return os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")


def _driver_library_present():
    # Loading libcuda directly is fast, and spares importing numba.cuda (about a second)
    # on the many machines that have no GPU.
    for name in ("libcuda.so.1", "libcuda.so", "nvcuda.dll", "libcuda.dylib"):
        try:
            ctypes.CDLL(name)
            return True
        except OSError:
            continue
    return False


def _unavailable(reason):
    return CudaUnavailableError(
        f"Torch not compiled with CUDA enabled: ember found no usable CUDA GPU ({reason}). "
        "Install an NVIDIA driver and ember-tensor[cuda] (numba-cuda) on a machine with a "
        "GPU, or set NUMBA_ENABLE_CUDASIM=1 before starting Python to run CUDA code on "
        "Numba's CUDA simulator.")


def lazy_init():
    """numba.cuda, loaded on first use; raises CudaUnavailableError when there is no GPU."""
    global _numba_cuda, _init_error
    if _numba_cuda is not None:
        return _numba_cuda
    with _init_lock:
        if _numba_cuda is not None:
            return _numba_cuda
        if _init_error is None:
            _init_error = _probe()
        if _init_error:
            raise _unavailable(_init_error)
        from numba import cuda as numba_cuda
        _numba_cuda = numba_cuda
        return numba_cuda


def _probe():
    """'' when numba.cuda can drive a GPU (or the simulator), else why not."""
    if importlib.util.find_spec("numba_cuda") is None:
        return "the numba-cuda package is not installed"
    if not _simulator_requested() and not _driver_library_present():
        return "no NVIDIA driver library (libcuda) was found"
    try:
        from numba import cuda as numba_cuda
        if not numba_cuda.jit.__module__.startswith("numba.cuda.simulator"):
            install_caching_allocator(numba_cuda)
        if not numba_cuda.is_available():
            return "numba.cuda.is_available() is False: no GPU or no working driver"
    except Exception as error:  # a broken install must not crash is_available()
        return f"numba.cuda failed to load: {error}"
    return ""


def is_available():
    """Whether ember can run CUDA code here (True under Numba's simulator)."""
    try:
        lazy_init()
    except Exception:
        return False
    return True


def is_initialized():
    """Whether CUDA has been initialised in this process."""
    return _numba_cuda is not None


def simulating():
    return lazy_init().jit.__module__.startswith("numba.cuda.simulator")


def device_count():
    """The number of usable GPUs (0 when CUDA is unavailable)."""
    if not is_available():
        return 0
    return _simulated_device_count() if simulating() else len(_numba_cuda.gpus)


# The simulator has one GPU. EMBER_CUDASIM_DEVICES=N makes ember present N simulated
# devices, so that multi-GPU rules (the current device, tensors landing on it, errors
# for ops across devices, copies between them) can be tested without GPUs: each thread
# keeps its own current index, and the memory behind every index is the host's.
_sim_thread = threading.local()


def _simulated_device_count():
    try:
        return max(1, int(os.environ.get("EMBER_CUDASIM_DEVICES", "1")))
    except ValueError:
        return 1


def current_index():
    cuda = lazy_init()
    if simulating():
        return getattr(_sim_thread, "index", 0)
    return cuda.get_current_device().id


def check_index(index):
    lazy_init()
    if not 0 <= index < device_count():
        raise RuntimeError("CUDA error: invalid device ordinal")
    return index


def set_device(index):
    """Make GPU `index` current on this thread: new CUDA memory is allocated there."""
    if index < 0 or index == current_index():
        return
    check_index(index)
    if simulating():
        _sim_thread.index = index
        return
    from numba.cuda.cudadrv.driver import driver
    # Like cudaSetDevice: replace the context on top of this thread's stack.
    driver.pop_active_context()
    _numba_cuda.gpus[index].__enter__()


@contextlib.contextmanager
def device_context(index):
    """Run a block with GPU `index` current (nothing to do when it already is)."""
    previous = current_index()
    if previous == index:
        yield
        return
    set_device(index)
    try:
        yield
    finally:
        set_device(previous)


# --- streams: each thread keeps its current stream per device ----------------------------

_tls = threading.local()  # .streams: {device index: Stream} for this thread


def thread_streams():
    """This thread's {device index: current stream} (streams made by ember_tensor.cuda)."""
    streams = getattr(_tls, "streams", None)
    if streams is None:
        streams = _tls.streams = {}
    return streams


def current_numba_stream():
    """The numba stream kernels launch on (0: the default stream). Called on every launch."""
    streams = getattr(_tls, "streams", None)
    if not streams:
        return 0
    s = streams.get(current_index())
    return 0 if s is None else s._numba



# --- the caching allocator ----------------------------------------------------------------

def caching_allocator_installed():
    return _emm_installed


_emm_installed = False


def install_caching_allocator(numba_cuda):
    """Make Numba allocate device memory through ember's caching allocator (EMM plugin).

    Only possible before Numba creates its first context; skipped when
    EMBER_CUDA_ALLOCATOR=numba or a context exists already (then ember counts its own
    allocations without caching).
    """
    global _emm_installed
    if os.environ.get("EMBER_CUDA_ALLOCATOR", "ember") == "numba":
        return
    from numba.cuda.cudadrv import driver as numba_driver
    if getattr(numba_driver, "_memory_manager", None) is not None:
        return  # a context exists already and has Numba's (or a user's) manager
    from . import allocator
    numba_cuda.set_memory_manager(allocator.CachingMemoryManager)
    _emm_installed = True


