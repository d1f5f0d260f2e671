"""ember_tensor.cuda: PyTorch's ``torch.cuda`` on Numba CUDA (the ``numba-cuda`` package).

Devices, streams and events are Numba's: the current device is the device of the CUDA
context Numba has made current on this thread (device 0 unless changed), and each
device's current stream is kept per thread here; ember's kernels launch on it.

Importing this module is cheap and never fails: numba.cuda is loaded on the first call
that needs a GPU. Without a usable GPU, `is_available()` is False (quickly: it does not
load numba.cuda when no driver library exists) and anything that needs a GPU raises
ember's "no CUDA" error. With ``NUMBA_ENABLE_CUDASIM=1`` in the environment, Numba's CUDA
simulator stands in for one GPU (slow, for tests): `is_available()` is then True.

>>> import ember_tensor as torch
>>> isinstance(torch.cuda.is_available(), bool)
True
"""
import contextlib
import time

from .._backends.cuda import runtime as _runtime
from .._backends.cuda.runtime import (  # noqa: F401 - part of torch.cuda
    CudaUnavailableError, device_count, is_available, is_initialized,
)
from .._device import device as _device_cls
from ._index import device_index as _device_index
from .._ops.creation import _legacy_types

__all__ = [
    "is_available", "is_initialized", "init", "device_count", "current_device", "set_device",
    "device", "device_of", "get_device_name", "get_device_capability", "get_device_properties",
    "synchronize", "is_bf16_supported", "Stream", "Event", "current_stream", "default_stream",
    "stream", "set_stream", "manual_seed", "manual_seed_all", "seed", "seed_all", "initial_seed",
    "get_rng_state", "get_rng_state_all", "set_rng_state", "set_rng_state_all",
    "memory_allocated", "max_memory_allocated", "reset_peak_memory_stats", "mem_get_info",
    "empty_cache", "memory_reserved", "max_memory_reserved", "memory_cached", "max_memory_cached",
    "reset_max_memory_allocated", "reset_max_memory_cached", "memory_stats", "memory_summary",
    "OutOfMemoryError",
]


# The runtime's state, under the names the layers above this module have used.
_lazy_init = _runtime.lazy_init
_simulating = _runtime.simulating
_current_index = _runtime.current_index
_check_index = _runtime.check_index
_device_context = _runtime.device_context
_current_numba_stream = _runtime.current_numba_stream


def init():
    """Initialise CUDA now (it is otherwise done on first use)."""
    _lazy_init()


def current_device():
    """Index of the current device."""
    return _current_index()


def set_device(device):
    """Make `device` current: new CUDA tensors are allocated there."""
    _runtime.set_device(_device_index(device, optional=True))


class device:
    """Context manager that makes a device current: ``with torch.cuda.device(1): ...``.

    None or -1 leaves the current device unchanged, as in PyTorch.
    """

    def __init__(self, device):
        self.idx = -1 if device is None else _device_index(device, optional=True)
        self.prev_idx = -1

    def __enter__(self):
        if self.idx >= 0:
            self.prev_idx = _current_index()
            if self.idx != self.prev_idx:
                _check_index(self.idx)
                set_device(self.idx)
        return self

    def __exit__(self, *exc):
        if self.idx >= 0 and self.prev_idx != self.idx:
            set_device(self.prev_idx)
        return False


class device_of(device):
    """Context manager that makes the device of tensor `obj` current (no-op for CPU tensors)."""

    def __init__(self, obj):
        super().__init__(obj.get_device() if obj.is_cuda else -1)


class _DeviceProperties:
    """What ``get_device_properties`` returns: name, capability, memory, SM count."""

    def __init__(self, name, major, minor, total_memory, multi_processor_count):
        self.name = name
        self.major, self.minor = major, minor
        self.total_memory = total_memory
        self.multi_processor_count = multi_processor_count

    def __repr__(self):
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, "
                f"minor={self.minor}, total_memory={self.total_memory // (1024 * 1024)}MB, "
                f"multi_processor_count={self.multi_processor_count})")


def get_device_properties(device=None):
    """Name, compute capability, total memory and multiprocessor count of a device."""
    index = _check_index(_device_index(device, optional=True))
    cuda = _lazy_init()
    if _simulating():
        return _DeviceProperties("Numba CUDA simulator", 5, 2, 0, 1)
    gpu = cuda.gpus[index]
    name = gpu.name.decode() if isinstance(gpu.name, bytes) else str(gpu.name)
    major, minor = gpu.compute_capability
    with _device_context(index):
        total = cuda.current_context().get_memory_info().total
    return _DeviceProperties(name, major, minor, total, gpu.MULTIPROCESSOR_COUNT)


def get_device_name(device=None):
    """The name of a device, e.g. 'NVIDIA H100 80GB HBM3'."""
    return get_device_properties(device).name


def get_device_capability(device=None):
    """(major, minor) compute capability of a device."""
    props = get_device_properties(device)
    return props.major, props.minor


def is_bf16_supported(including_emulation=True):
    """Whether bfloat16 tensors work on the current device.

    ember computes bfloat16 in float32 on every GPU (an emulation), so this is True when
    CUDA is available; with including_emulation=False only GPUs with native bfloat16
    arithmetic (compute capability 8.0 and up) count.
    """
    if not is_available():
        return False
    return including_emulation or get_device_capability() >= (8, 0)


def synchronize(device=None):
    """Wait for all work queued on a device to finish."""
    index = _check_index(_device_index(device, optional=True))
    with _device_context(index):
        _lazy_init().synchronize()


# --- streams and events ------------------------------------------------------------------


class Stream:
    """A CUDA stream: kernels queued on it run in order; ``with torch.cuda.stream(s):``."""

    def __init__(self, device=None, priority=0, **kwargs):
        index = _check_index(_device_index(device, optional=True))
        self._default = kwargs.get("_default", False)
        with _device_context(index):
            cuda = _lazy_init()
            self._numba = cuda.default_stream() if self._default else cuda.stream()
        self.device = _device_cls("cuda", index)

    @property
    def cuda_stream(self):
        """The raw cudaStream_t handle as an int (0 for the legacy default stream)."""
        if self._default:
            return 0
        handle = getattr(self._numba, "handle", None)
        if handle is None:  # the simulator's streams have no handle
            return id(self._numba)
        return int(handle)

    def synchronize(self):
        """Wait until every kernel queued on this stream has finished."""
        self._numba.synchronize()

    def record_event(self, event=None):
        """Record `event` (a new one if None) on this stream and return it."""
        event = Event() if event is None else event
        event.record(self)
        return event

    def wait_event(self, event):
        """Make later work on this stream wait for `event`."""
        event.wait(self)

    def wait_stream(self, stream):
        """Make later work on this stream wait for the work queued on `stream` so far."""
        self.wait_event(stream.record_event())

    def query(self):
        """Whether all work queued on this stream has finished."""
        return self.record_event().query()

    def __eq__(self, other):
        return isinstance(other, Stream) and self.cuda_stream == other.cuda_stream and \
            self.device == other.device

    def __hash__(self):
        return hash((self.cuda_stream, self.device))

    def __repr__(self):
        return f"<torch.cuda.Stream device={self.device} cuda_stream={self.cuda_stream:#x}>"


class Event:
    """A CUDA event: a marker in a stream to wait on or to time with (``enable_timing``)."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        self.enable_timing = enable_timing
        cuda = _lazy_init()
        # The simulator's events take no arguments and time nothing: host clocks do.
        self._numba = cuda.event() if _simulating() else cuda.event(timing=enable_timing)
        self._recorded_at = None  # host time, for the simulator (it runs synchronously)

    def record(self, stream=None):
        """Record the event on `stream` (the current stream by default)."""
        stream = current_stream() if stream is None else stream
        self._numba.record(stream._numba)
        self._recorded_at = time.perf_counter()

    def wait(self, stream=None):
        """Make later work on `stream` (the current one by default) wait for this event."""
        stream = current_stream() if stream is None else stream
        self._numba.wait(stream._numba)

    def query(self):
        """Whether the work before the event's record has finished."""
        query = getattr(self._numba, "query", None)
        return True if query is None else bool(query())

    def synchronize(self):
        """Wait until the work before the event's record has finished."""
        self._numba.synchronize()

    def elapsed_time(self, end_event):
        """Milliseconds between this event's record and `end_event`'s."""
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        if self._recorded_at is None or end_event._recorded_at is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        if _simulating():
            return (end_event._recorded_at - self._recorded_at) * 1000.0
        end_event.synchronize()
        return self._numba.elapsed_time(end_event._numba)

    def __repr__(self):
        return f"<torch.cuda.Event enable_timing={self.enable_timing}>"


def default_stream(device=None):
    """The default (legacy NULL) stream of a device."""
    index = _check_index(_device_index(device, optional=True))
    return Stream(index, _default=True)


def current_stream(device=None):
    """The stream ember's kernels are queued on for a device, on this thread."""
    index = _device_index(device, optional=True)
    streams = _runtime.thread_streams()
    s = streams.get(index)
    if s is None:
        s = streams[index] = default_stream(index)
    return s


def set_stream(stream):
    """Make `stream` current for its device on this thread."""
    if stream is None:
        return
    streams = _runtime.thread_streams()
    streams[stream.device.index] = stream


@contextlib.contextmanager
def stream(stream):
    """Make `stream` (and its device) current inside the block; None does nothing."""
    if stream is None:
        yield
        return
    previous_device = _current_index()
    previous = current_stream(stream.device.index)
    set_device(stream.device.index)
    set_stream(stream)
    try:
        yield
    finally:
        set_stream(previous)
        set_device(previous_device)


# --- random numbers ----------------------------------------------------------------------
# Each GPU has its own default generator (Philox, state = seed and offset; see _random.py),
# made on first use. As in PyTorch, seeding is silently skipped without a GPU.


def _generator(device=None):
    from .. import _random
    return _random.cuda_default_generator(_check_index(_device_index(device)))


def manual_seed(seed):
    """Seed the current GPU's default generator (all GPUs: `manual_seed_all`)."""
    seed = int(seed)
    if is_available():
        _generator().manual_seed(seed)


def manual_seed_all(seed):
    """Seed every GPU's default generator, including GPUs not used yet."""
    from .. import _random
    _random.cuda_manual_seed_all(int(seed))


def seed():
    """Seed the current GPU's default generator from OS entropy."""
    if is_available():
        _generator().seed()


def seed_all():
    """Seed every GPU's default generator with one seed from OS entropy."""
    from .. import _random
    _random.cuda_manual_seed_all(_random._nondeterministic_seed())


def initial_seed():
    """The seed of the current GPU's default generator."""
    return _generator().initial_seed()


def get_rng_state(device="cuda"):
    """A GPU's generator state as a CPU uint8 tensor: seed and offset (16 bytes), PyTorch's layout.

    >>> import ember_tensor as torch
    >>> if torch.cuda.is_available():
    ...     state = torch.cuda.get_rng_state()
    ...     a = torch.rand(3, device="cuda")
    ...     torch.cuda.set_rng_state(state)
    ...     assert torch.rand(3, device="cuda").tolist() == a.tolist()
    """
    return _generator(device).get_state()


def get_rng_state_all():
    """The generator states of all GPUs, a list indexed by device."""
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state(new_state, device="cuda"):
    """Restore a GPU's generator to a state from `get_rng_state`."""
    _generator(device).set_state(new_state)


def set_rng_state_all(new_states):
    """Restore every GPU's generator from a list made by `get_rng_state_all`."""
    for index, state in enumerate(new_states):
        set_rng_state(state, index)


# --- memory: statistics and controls live in `memory` (imported at the end) ---------------


def __getattr__(name):
    # torch.cuda.OutOfMemoryError, without importing the allocator module up front
    if name == "OutOfMemoryError":
        from .._backends.cuda import allocator as _cuda_alloc
        return _cuda_alloc.OutOfMemoryError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


from .memory import (  # noqa: E402 - they use the device helpers above
    empty_cache, max_memory_allocated, max_memory_cached, max_memory_reserved, mem_get_info,
    memory_allocated, memory_cached, memory_reserved, memory_stats, memory_summary,
    reset_max_memory_allocated, reset_max_memory_cached, reset_peak_memory_stats,
)

# Legacy constructors: ember_tensor.cuda.FloatTensor([1, 2]) makes a CUDA float tensor.
globals().update(_legacy_types("cuda", "torch.cuda"))
__all__ += sorted(_legacy_types("cuda", "torch.cuda"))
