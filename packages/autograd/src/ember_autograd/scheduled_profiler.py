"""``torch.profiler``: the op profiler of `ember_autograd.profiler`, driven by a schedule.

`profile(activities, schedule, on_trace_ready, record_shapes, ...)` is used around a
training loop that calls ``prof.step()`` after each step. A `schedule` says, per step,
whether to skip it, warm up (run, record nothing kept), record, or record and then hand
the finished trace to `on_trace_ready` (`tensorboard_trace_handler` writes it as a Chrome
/ Perfetto JSON file, the file TensorBoard's profiler plugin reads). Without a schedule
the whole block is recorded. Each recorded step is a ``ProfilerStep#<n>`` range, as in
PyTorch.

Profiling with ``ProfilerActivity.CUDA`` synchronizes the device around each op, so op
times include their kernels (ember has no CUPTI tracer). ``profile_memory``,
``with_stack`` and ``with_flops`` are recorded as `ember_autograd.profiler` records them;
``with_modules`` is accepted and not recorded.
"""
import enum
import gzip
import os
import shutil
import socket
import time

from . import profiler as _autograd_profiler
from .profiler import record_function

__all__ = ["profile", "schedule", "ProfilerAction", "ProfilerActivity", "tensorboard_trace_handler",
           "record_function", "supported_activities"]


class ProfilerActivity(enum.Enum):
    """What to profile: ops on the CPU, and (by synchronizing) their CUDA kernels."""

    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


def supported_activities():
    """The activities this build can profile: CPU, and CUDA where a device is there."""
    import ember_tensor

    found = {ProfilerActivity.CPU}
    if ember_tensor.cuda.is_available():
        found.add(ProfilerActivity.CUDA)
    return found


class ProfilerAction(enum.Enum):
    """What the profiler does during one step."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """A schedule: after `skip_first` steps, cycles of `wait` idle steps, `warmup` steps
    and `active` recorded steps (the trace is handed over at the last), `repeat` times (0:
    until the loop ends). `skip_first_wait` skips the first cycle's wait."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError("Invalid profiler schedule arguments")
    if warmup == 0:
        import warnings

        warnings.warn("Profiler won't be using warmup, this can skew profiler results", stacklevel=2)

    def action(step):
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait:
            step += wait
        cycle = wait + warmup + active
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        position = step % cycle
        if position < wait:
            return ProfilerAction.NONE
        if position < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if position < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return action


def _record_everything(step):
    return ProfilerAction.RECORD


_RECORDING = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)


class profile:
    """Profile a block (context manager, or `start()`/`stop()`), stepping with `step()`."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None, record_shapes=False,
                 profile_memory=False, with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, execution_trace_observer=None, acc_events=False, use_cuda=None,
                 custom_trace_id_callback=None):
        activities = set(activities) if activities is not None else supported_activities()
        if use_cuda:
            activities.add(ProfilerActivity.CUDA)
        self.activities = activities
        self.schedule = schedule or _record_everything
        self.on_trace_ready = on_trace_ready
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.step_num = 0
        self.current_action = None
        self.profiler = None  # the recorder of the current cycle (an autograd profiler)
        self._finished = None  # the last finished cycle's recorder
        self._step_range = None

    # -- the context -------------------------------------------------------------------------

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        """Begin at step 0 (what entering the ``with`` block does)."""
        self.step_num = 0
        self.current_action = self.schedule(0)
        self._enter(self.current_action)

    def stop(self):
        """End: a cycle still recording is finished and handed to `on_trace_ready`."""
        self._leave(self.current_action, handing_over=self.current_action in _RECORDING)
        self.current_action = None

    def step(self):
        """Mark the end of a step: the schedule decides what the next one does."""
        previous = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        if previous is ProfilerAction.RECORD_AND_SAVE:
            self._leave(previous, handing_over=True)
            self._enter(self.current_action)
        elif previous in _RECORDING and self.current_action in _RECORDING:
            self._next_step_range()
        elif previous is ProfilerAction.WARMUP and self.current_action in _RECORDING:
            self._leave(previous, handing_over=False)
            self._enter(self.current_action)
        elif previous != self.current_action:
            self._leave(previous, handing_over=previous in _RECORDING)
            self._enter(self.current_action)

    def _enter(self, action):
        if action is ProfilerAction.NONE:
            return
        use_device = "cuda" if ProfilerActivity.CUDA in self.activities else None
        self.profiler = _autograd_profiler.profile(
            record_shapes=self.record_shapes, profile_memory=self.profile_memory, with_stack=self.with_stack,
            with_flops=self.with_flops, use_device=use_device)
        self.profiler.__enter__()
        self._next_step_range()

    def _next_step_range(self):
        if self._step_range is not None:
            self._step_range.__exit__(None, None, None)
        self._step_range = record_function(f"ProfilerStep#{self.step_num}")
        self._step_range.__enter__()

    def _leave(self, action, handing_over):
        if action is ProfilerAction.NONE or self.profiler is None:
            return
        if self._step_range is not None:
            self._step_range.__exit__(None, None, None)
            self._step_range = None
        self.profiler.__exit__(None, None, None)
        finished, self.profiler = self.profiler, None
        if handing_over:  # a warm-up cycle's events are dropped
            self._finished = finished
            if self.on_trace_ready is not None:
                self.on_trace_ready(self)

    # -- the results of the last finished cycle ---------------------------------------------

    def _results(self):
        if self._finished is None:
            raise RuntimeError("Profiler didn't finish running")
        return self._finished

    def events(self):
        """The events of the last recorded cycle."""
        return self._results().events()

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        """The last recorded cycle's events averaged per op (``.table(sort_by=...)`` prints them)."""
        return self._results().key_averages(group_by_input_shape, group_by_stack_n)

    def export_chrome_trace(self, path):
        """Write the last recorded cycle as a Chrome / Perfetto trace (JSON) to `path`."""
        self._results().export_chrome_trace(path)


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False):
    """An `on_trace_ready` that writes each trace to
    ``<dir_name>/<worker_name>.<milliseconds>.pt.trace.json[.gz]``."""
    def handler(prof):
        os.makedirs(dir_name, exist_ok=True)
        name = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        path = os.path.join(dir_name, f"{name}.{time.time_ns() // 1_000_000}.pt.trace.json")
        prof.export_chrome_trace(path)
        if use_gzip:
            with open(path, "rb") as plain, gzip.open(path + ".gz", "wb") as packed:
                shutil.copyfileobj(plain, packed)
            os.remove(path)

    return handler
