"""The op profiler (PyTorch's ``torch.autograd.profiler``): ``profile`` times every op that
goes through ember_tensor's dispatcher, ``record_function`` adds labelled ranges.

While a profile is active it registers an outermost dispatcher wrapper, so the time of an
op includes autograd's recording; ops called inside other ops (and inside
``record_function`` ranges) become their children, and self time excludes children. With
``use_cuda=True`` (or ``use_device='cuda'``) the device is synchronized around each op, so
the measured time includes the kernels it queued (PyTorch reports that as "CUDA total").
``profile_memory``, ``with_stack`` and ``with_flops`` add PyTorch's memory columns, source
locations and FLOP counts (`_profiler.memory`, `_profiler.stack`, `_profiler.flops` say
how each is measured).

>>> import ember_tensor as torch
>>> x = torch.ones(2, 3)
>>> with profile(record_shapes=True) as prof:
...     y = x.exp() + 1
>>> [e.name for e in prof.function_events]
['aten::exp', 'aten::add']
>>> prof.function_events[1].input_shapes
[[2, 3], []]
"""
import functools
import threading
import time

import ember_tensor
from ember_tensor import Tensor, register_wrapper, unregister_wrapper

from ._profiler.events import EventList, FunctionEvent, FunctionEventAvg
from ._profiler.flops import op_flops
from ._profiler.memory import MemoryWatch
from ._profiler.stack import StackRecorder

__all__ = ["profile", "record_function", "FunctionEvent", "FunctionEventAvg", "EventList"]

_active = []  # the profiles recording now (nested profiles all see every op)
_local = threading.local()


def _now_us():
    return time.perf_counter_ns() / 1000.0


def _shape_of(a):
    if isinstance(a, Tensor):
        return list(a.shape)
    if isinstance(a, (list, tuple)) and a and all(isinstance(x, Tensor) for x in a):
        return [list(x.shape) for x in a]
    return []


class _Options:
    """What the active profiles record beyond times (any of them asking is enough)."""

    shapes = memory = flops = stack = False
    stack_recorder = None  # a StackRecorder while a profile keeps stacks
    memory_watch = None  # a MemoryWatch while a profile records memory

    @classmethod
    def refresh(cls):
        cls.shapes = any(p.record_shapes for p in _active)
        cls.flops = any(p.with_flops for p in _active)
        cls.stack = any(p.with_stack for p in _active)
        cls.memory = any(p.profile_memory for p in _active)
        cls.stack_recorder = (cls.stack_recorder or StackRecorder()) if cls.stack else None
        if cls.memory and cls.memory_watch is None:
            cls.memory_watch = MemoryWatch(_charge_free)
        elif not cls.memory and cls.memory_watch is not None:
            cls.memory_watch.close()
            cls.memory_watch = None


def _open_event(name, input_shapes=None, is_user_annotation=False, flops=0):
    """Start an event on this thread (a child of the innermost open one) in every active profile."""
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    frames = _Options.stack_recorder() if _Options.stack_recorder is not None else None
    event = FunctionEvent(name, _now_us(), threading.get_ident(), input_shapes, is_user_annotation, frames, flops)
    if stack:
        event.cpu_parent = stack[-1]
        stack[-1].cpu_children.append(event)
    stack.append(event)
    for prof in _active:
        prof._events.append(event)
    return event


def _close_event(event):
    event.end_us = _now_us()
    stack = _local.stack
    if stack and stack[-1] is event:
        stack.pop()


def _charge_free(nbytes, is_device):
    """A watched storage died: charge the free to the innermost running event, or to a
    ``[memory]`` event when none runs (PyTorch's name for memory outside any op)."""
    stack = getattr(_local, "stack", None)
    if stack:
        event = stack[-1]
    else:
        event = FunctionEvent("[memory]", _now_us(), threading.get_ident())
        for prof in _active:
            if prof.profile_memory:
                prof._events.append(event)
    if is_device:
        event.self_device_memory_usage -= nbytes
    else:
        event.self_cpu_memory_usage -= nbytes


def _counts_flops_already(stack):
    """Whether an op that PyTorch counts is running: ember's addmm runs mm and add, and
    PyTorch's count of the addmm already holds theirs."""
    return stack is not None and any(e.flops for e in stack)


def _profiling_wrapper(op, args, kwargs, redispatch):
    # Built-in ops are "aten::<name>" as in PyTorch; users' ops keep their namespace ("custom::swish").
    name = op.name if "::" in op.name else "aten::" + op.name
    shapes = [_shape_of(a) for a in args] if _Options.shapes else None
    flops = 0
    if _Options.flops and not _counts_flops_already(getattr(_local, "stack", None)):
        flops = op_flops(name, args, kwargs)
    event = _open_event(name, shapes, flops=flops)
    sync = _device_sync()
    try:
        if sync is None:
            out = redispatch(op, args, kwargs)
        else:
            sync()
            start = _now_us()
            out = redispatch(op, args, kwargs)
            sync()
            event.device_time_total = _now_us() - start
        watch = _Options.memory_watch
        if watch is not None:
            cpu, device = watch.charge_outputs(args, kwargs, out)
            event.self_cpu_memory_usage += cpu
            event.self_device_memory_usage += device
        return out
    finally:
        _close_event(event)


def _device_sync():
    for prof in _active:
        if prof._device_sync is not None:
            return prof._device_sync
    return None


class profile:
    """Record every op (and ``record_function`` range) run inside the ``with`` block.

    Args:
        enabled: profile at all (False makes the context manager do nothing).
        use_cuda / use_device: also measure device time ('cuda'), synchronizing around ops.
        record_shapes: record the shapes of each op's tensor arguments (``input_shapes``).
        profile_memory: charge the bytes of the tensors each op allocates (and of their
            frees) to the op: ``cpu_memory_usage``/``self_cpu_memory_usage`` and the CUDA pair.
        with_stack: keep the Python frames that called each op (``stack``).
        with_flops: count each op's FLOPs by PyTorch's formulas (``flops``).
        Each option costs only while it is on; with none, an op pays for its timing alone.
    """

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False,
                 with_flops=False, profile_memory=False, with_stack=False, with_modules=False,
                 use_kineto=False, use_cpu=True, experimental_config=None, acc_events=False,
                 custom_trace_id_callback=None):
        self.enabled = enabled
        self.record_shapes = record_shapes
        self.use_device = "cuda" if use_cuda else use_device
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self._events = []
        self._device_sync = None
        self._function_events = None
        self.entered = False

    def __enter__(self):
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        if self.use_device == "cuda" and ember_tensor.cuda.is_available():
            self._device_sync = ember_tensor.cuda.synchronize
        if not _active:
            register_wrapper(_profiling_wrapper, outermost=True)
        _active.append(self)
        _Options.refresh()
        return self

    def __exit__(self, *exc):
        if not self.enabled:
            return False
        _active.remove(self)
        if not _active:
            unregister_wrapper(_profiling_wrapper)
        _Options.refresh()
        self._function_events = EventList(self._events, self.use_device, self.profile_memory, self.with_flops)
        return False

    def _check_finished(self):
        if self._function_events is None:
            raise RuntimeError("Profiler didn't finish running")

    @property
    def function_events(self):
        self._check_finished()
        return self._function_events

    def events(self):
        """All recorded events, in the order they started."""
        return self.function_events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        """Events averaged per op name; see `EventList.key_averages`."""
        self._check_finished()
        return self._function_events.key_averages(group_by_input_shape, group_by_stack_n)

    def total_average(self):
        self._check_finished()
        return self._function_events.total_average()

    @property
    def self_cpu_time_total(self):
        self._check_finished()
        return self._function_events.self_cpu_time_total

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False):
        """The table of every event; ``key_averages().table(...)`` is the usual summary."""
        self._check_finished()
        return self._function_events.table(sort_by, row_limit, max_src_column_width, max_name_column_width,
                                           max_shapes_column_width, header, top_level_events_only)

    def export_chrome_trace(self, path):
        """Write a Chrome trace (JSON) of the recorded events to `path`."""
        self._check_finished()
        self._function_events.export_chrome_trace(path)

    def __str__(self):
        return self.key_averages().table() if self._function_events is not None else "<unfinished profile>"


class record_function:
    """Label a range of code in the profile (context manager or decorator).

    >>> with profile() as prof:
    ...     with record_function("my_block"):
    ...         pass
    >>> prof.function_events[0].name
    'my_block'
    """

    def __init__(self, name, args=None):
        self.name = name
        self.args = args
        self._event = None

    def __enter__(self):
        if _active:
            self._event = _open_event(self.name, None, is_user_annotation=True)
        return self

    def __exit__(self, *exc):
        if self._event is not None:
            _close_event(self._event)
            self._event = None
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)
        return wrapped
