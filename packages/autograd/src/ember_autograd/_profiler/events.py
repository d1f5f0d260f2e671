"""The profiler's events and their summaries, in PyTorch's shape: `FunctionEvent` (one op call
or ``record_function`` range), `FunctionEventAvg` (the events of one key added up) and
`EventList` (``key_averages``, ``table``, ``export_chrome_trace``). `ember_autograd.profiler`
records them and exports them under PyTorch's names.
"""
import collections
import json
import os

from .table import build_table

__all__ = ["FunctionEvent", "FunctionEventAvg", "EventList"]


class FunctionEvent:
    """One op call or ``record_function`` range: times in microseconds, memory in bytes.

    ``self_cpu_memory_usage`` is what was allocated (minus what was freed) while this event
    was the innermost one running (``profile_memory=True``); ``cpu_memory_usage`` adds its
    children's. ``flops`` is PyTorch's count for the ops it counts (``with_flops=True``);
    ``stack`` the Python frames that called it, innermost first (``with_stack=True``).
    """

    def __init__(self, name, start_us, thread, input_shapes=None, is_user_annotation=False, stack=None,
                 flops=0):
        self.name = name
        self.start_us = start_us
        self.end_us = start_us
        self.thread = thread
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.stack = stack if stack is not None else []
        self.flops = flops
        self.cpu_children = []
        self.cpu_parent = None
        self.device_time_total = 0.0
        self.self_cpu_memory_usage = 0
        self.self_device_memory_usage = 0
        self.is_user_annotation = is_user_annotation
        self.count = 1

    @property
    def key(self):
        return self.name

    @property
    def cpu_time_total(self):
        return self.end_us - self.start_us

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def cpu_time(self):
        return self.cpu_time_total

    @property
    def self_device_time_total(self):
        return max(0.0, self.device_time_total - sum(c.device_time_total for c in self.cpu_children))

    @property
    def cpu_memory_usage(self):
        return self.self_cpu_memory_usage + sum(c.cpu_memory_usage for c in self.cpu_children)

    @property
    def device_memory_usage(self):
        return self.self_device_memory_usage + sum(c.device_memory_usage for c in self.cpu_children)

    cuda_time_total = property(lambda self: self.device_time_total)
    self_cuda_time_total = property(lambda self: self.self_device_time_total)
    cuda_memory_usage = property(lambda self: self.device_memory_usage)
    self_cuda_memory_usage = property(lambda self: self.self_device_memory_usage)

    def __repr__(self):
        return (f"<FunctionEvent name={self.name} cpu_time={self.cpu_time_total:.3f}us "
                f"cpu_memory_usage={self.cpu_memory_usage} flops={self.flops} "
                f"input_shapes={self.input_shapes}>")


class FunctionEventAvg:
    """The events of one key added up (`EventList.key_averages`)."""

    def __init__(self, key, input_shapes=None, stack=None):
        self.key = key
        self.name = key
        self.input_shapes = input_shapes
        self.stack = stack if stack is not None else []
        self.cpu_parent = None
        self.count = 0
        self.flops = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.device_time_total = 0.0
        self.self_device_time_total = 0.0
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.device_memory_usage = 0
        self.self_device_memory_usage = 0

    def add(self, event):
        if not self.count:  # the group's parent is its first event's, as in PyTorch (top_level_events_only)
            self.cpu_parent = getattr(event, "cpu_parent", None)
        self.count += event.count
        self.flops += event.flops
        for attr in ("cpu_time_total", "self_cpu_time_total", "device_time_total", "self_device_time_total",
                     "cpu_memory_usage", "self_cpu_memory_usage", "device_memory_usage",
                     "self_device_memory_usage"):
            setattr(self, attr, getattr(self, attr) + getattr(event, attr))
        return self

    @property
    def cpu_time(self):
        return self.cpu_time_total / self.count if self.count else 0.0

    cuda_time_total = property(lambda self: self.device_time_total)
    self_cuda_time_total = property(lambda self: self.self_device_time_total)
    cuda_memory_usage = property(lambda self: self.device_memory_usage)
    self_cuda_memory_usage = property(lambda self: self.self_device_memory_usage)

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} count={self.count} cpu_time_total={self.cpu_time_total:.3f}us "
                f"cpu_memory_usage={self.cpu_memory_usage} flops={self.flops}>")


class EventList(list):
    """A list of events with PyTorch's summaries: `key_averages`, `table`, `export_chrome_trace`."""

    def __init__(self, events=(), use_device=None, profile_memory=False, with_flops=False):
        super().__init__(events)
        self._use_device = use_device
        self._profile_memory = profile_memory
        self._with_flops = with_flops

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        """One `FunctionEventAvg` per op name, and per input shapes and per innermost
        `group_by_stack_n` stack frames if asked."""
        groups = collections.OrderedDict()
        for e in self:
            key = (e.key, e.is_user_annotation)
            if group_by_input_shape:
                key += (str(e.input_shapes),)
            if group_by_stack_n > 0:
                key += tuple(e.stack[:group_by_stack_n])
            if key not in groups:
                groups[key] = FunctionEventAvg(e.key, e.input_shapes if group_by_input_shape else None,
                                               e.stack[:group_by_stack_n] if group_by_stack_n > 0 else None)
            groups[key].add(e)
        return EventList(groups.values(), self._use_device, self._profile_memory, self._with_flops)

    def total_average(self):
        """All events added up into one `FunctionEventAvg` named 'Total'."""
        total = FunctionEventAvg("Total")
        for e in self:
            total.add(e)
        return total

    @property
    def self_cpu_time_total(self):
        return sum(e.self_cpu_time_total for e in self)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False):
        """The per-op table PyTorch prints: self and total CPU time, device time, memory,
        calls, input shapes, source locations and FLOPs (the last five as recorded)."""
        return build_table(self, use_device=self._use_device, profile_memory=self._profile_memory,
                           with_flops=self._with_flops, sort_by=sort_by, row_limit=row_limit,
                           max_src_column_width=max_src_column_width, max_name_column_width=max_name_column_width,
                           max_shapes_column_width=max_shapes_column_width, header=header,
                           top_level_events_only=top_level_events_only)

    def export_chrome_trace(self, path):
        """Write the events as Chrome trace JSON (chrome://tracing, Perfetto): one complete
        ('X') event per op call, nested by time on its thread."""
        pid = os.getpid()
        trace = []
        for e in self:
            if not isinstance(e, FunctionEvent):
                continue
            args = {"Input Dims": e.input_shapes} if e.input_shapes else {}
            if e.device_time_total:
                args["Device time (us)"] = e.device_time_total
            if e.flops:
                args["flops"] = e.flops
            trace.append({"name": e.name, "ph": "X", "cat": "user_annotation" if e.is_user_annotation else "cpu_op",
                          "ts": e.start_us, "dur": e.cpu_time_total, "pid": pid, "tid": e.thread,
                          "args": args})
        with open(path, "w") as f:
            json.dump({"traceEvents": trace, "displayTimeUnit": "ms"}, f)
