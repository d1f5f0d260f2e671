"""``torch.accelerator``: the device-agnostic view of the machine's accelerator.

ember's one accelerator is CUDA (a GPU, or Numba's simulator under
NUMBA_ENABLE_CUDASIM=1); the CPU is not an accelerator, as in PyTorch. Programs pick
their device with ``torch.accelerator.current_accelerator() or torch.device("cpu")``.

>>> import ember_tensor as torch
>>> from ember_tensor import accelerator
>>> accelerator.current_accelerator() in (None, torch.device("cuda"))
True
"""
from . import cuda
from ._device import device as _device
from ._dtype import ALL_DTYPES

__all__ = ["current_accelerator", "is_available", "device_count", "current_device_index",
           "current_device_idx", "set_device_index", "set_device_idx", "device_index", "synchronize",
           "current_stream", "set_stream", "empty_cache", "memory_allocated", "max_memory_allocated",
           "memory_reserved", "max_memory_reserved", "memory_stats", "reset_peak_memory_stats",
           "reset_accumulated_memory_stats", "get_memory_info", "get_device_capability"]


def is_available():
    """Whether an accelerator (a CUDA device) can be used."""
    return cuda.is_available()


def current_accelerator(check_available=False):
    """``device('cuda')`` when CUDA is there, else None (`check_available` is accepted for
    PyTorch's signature: ember knows of no accelerator that is present but unusable)."""
    return _device("cuda") if is_available() else None


def device_count():
    """How many accelerator devices there are (0 without one)."""
    return cuda.device_count() if is_available() else 0


def _require():
    if not is_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")


def _index(device):
    """The device index of `device` (an int, 'cuda:1', a device, or None: the current one)."""
    if device is None:
        return cuda.current_device()
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    device = _device(device)
    if device.type != "cuda":
        raise ValueError(f"{device.type} doesn't match the current accelerator cuda.")
    return cuda.current_device() if device.index is None else device.index


def current_device_index():
    """The index of the current accelerator device."""
    _require()
    return cuda.current_device()


def set_device_index(device, /):
    """Make `device` (an index, 'cuda:1' or a device) the current accelerator device."""
    _require()
    cuda.set_device(_index(device))


# PyTorch's older spellings of the two.
current_device_idx = current_device_index
set_device_idx = set_device_index


class device_index:
    """A context in which `device` (an index; None changes nothing) is current."""

    def __init__(self, device, /):
        self.index = device
        self.previous = None

    def __enter__(self):
        if self.index is not None:
            _require()
            self.previous = cuda.current_device()
            cuda.set_device(self.index)
        return self

    def __exit__(self, *exc):
        if self.previous is not None:
            cuda.set_device(self.previous)


def synchronize(device=None, /):
    """Wait for all work queued on `device` (the current one by default)."""
    _require()
    cuda.synchronize(_index(device))


def current_stream(device=None, /):
    """The current stream of `device`."""
    _require()
    return cuda.current_stream(_index(device))


def set_stream(stream):
    """Make `stream` current on its device."""
    _require()
    cuda.set_stream(stream)


def empty_cache():
    """Give cached, unused accelerator memory back (nothing without an accelerator)."""
    if is_available():
        cuda.empty_cache()


def memory_allocated(device_index=None, /):
    """Bytes held by tensors on the device."""
    _require()
    return cuda.memory_allocated(_index(device_index))


def max_memory_allocated(device_index=None, /):
    """Peak of `memory_allocated` since start-up or the last reset."""
    _require()
    return cuda.max_memory_allocated(_index(device_index))


def memory_reserved(device_index=None, /):
    """Bytes the caching allocator holds on the device."""
    _require()
    return cuda.memory_reserved(_index(device_index))


def max_memory_reserved(device_index=None, /):
    """Peak of `memory_reserved`."""
    _require()
    return cuda.max_memory_reserved(_index(device_index))


def memory_stats(device_index=None, /):
    """The allocator's statistics for the device."""
    _require()
    return cuda.memory_stats(_index(device_index))


def reset_peak_memory_stats(device_index=None, /):
    """Restart the peak statistics from current usage."""
    _require()
    cuda.reset_peak_memory_stats(_index(device_index))


def reset_accumulated_memory_stats(device_index=None, /):
    """Restart the accumulated statistics (ember keeps peaks only: the same as the peaks)."""
    reset_peak_memory_stats(device_index)


def get_memory_info(device_index=None, /):
    """(free, total) bytes of the device."""
    _require()
    return cuda.mem_get_info(_index(device_index))


def get_device_capability(device=None, /):
    """{'supported_dtypes': the dtypes tensors can have on the device}, PyTorch's keys."""
    _require()
    _index(device)
    return {"supported_dtypes": set(ALL_DTYPES)}
