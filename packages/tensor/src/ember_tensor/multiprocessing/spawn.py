"""``torch.multiprocessing.spawn``: run ``fn(i, *args)`` in `nprocs` processes and wait
for them, turning a child's exception or death into an error in the parent (the others
are then stopped), as PyTorch's does.
"""
import multiprocessing
import multiprocessing.connection
import signal
import traceback

__all__ = ["spawn", "start_processes", "ProcessContext", "ProcessException", "ProcessRaisedException",
           "ProcessExitedException"]


class ProcessException(Exception):
    """A spawned process failed: `error_index` is its index, `pid` its process id."""

    def __init__(self, msg, error_index, pid):
        super().__init__(msg)
        self.msg, self.error_index, self.pid = msg, error_index, pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """A spawned process raised; the message holds its traceback."""


class ProcessExitedException(ProcessException):
    """A spawned process exited with a non-zero code or was killed by a signal."""

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code, self.signal_name = exit_code, signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid, self.exit_code, self.signal_name)


def _wrap(fn, i, args, error_queue):
    """The child's body: run fn(i, *args); an exception goes to the parent as text."""
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass  # the parent is stopping everyone
    except Exception:
        error_queue.put(traceback.format_exc())
        raise SystemExit(1)


class ProcessContext:
    """The processes `start_processes` started (`processes`, `pids()`); `join()` waits."""

    def __init__(self, processes, error_queues):
        self.processes = processes
        self.error_queues = error_queues
        self.sentinels = {process.sentinel: index for index, process in enumerate(processes)}

    def pids(self):
        """The process ids of the processes."""
        return [int(process.pid) for process in self.processes]

    def join(self, timeout=None):
        """Wait for the processes; True when all have ended well, False on timeout.

        The first to fail stops the others and raises ProcessRaisedException (with its
        traceback) or ProcessExitedException.
        """
        if not self.sentinels:
            return True
        ready = multiprocessing.connection.wait(self.sentinels.keys(), timeout=timeout)
        failed = None
        for sentinel in ready:
            index = self.sentinels.pop(sentinel)
            process = self.processes[index]
            process.join()
            if process.exitcode != 0 and failed is None:
                failed = index
        if failed is None:
            return not self.sentinels
        for process in self.processes:  # one failed: stop the rest
            if process.is_alive():
                process.terminate()
            process.join()
        process = self.processes[failed]
        if not self.error_queues[failed].empty():
            message = f"\n\n-- Process {failed} terminated with the following error:\n" + self.error_queues[failed].get()
            raise ProcessRaisedException(message, failed, process.pid)
        if process.exitcode < 0:
            name = signal.Signals(-process.exitcode).name
            raise ProcessExitedException(f"process {failed} terminated with signal {name}", failed, process.pid,
                                         process.exitcode, name)
        raise ProcessExitedException(f"process {failed} terminated with exit code {process.exitcode}", failed,
                                     process.pid, process.exitcode)


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Start `nprocs` processes running ``fn(i, *args)`` by `start_method`; wait for them
    when `join` (None is returned), else return their ProcessContext."""
    context = multiprocessing.get_context(start_method)
    processes, error_queues = [], []
    for i in range(nprocs):
        error_queue = context.SimpleQueue()
        process = context.Process(target=_wrap, args=(fn, i, args, error_queue), daemon=daemon)
        process.start()
        processes.append(process)
        error_queues.append(error_queue)
    process_context = ProcessContext(processes, error_queues)
    if not join:
        return process_context
    while not process_context.join():
        pass
    return None


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """`start_processes` with the spawn start method (PyTorch's `spawn`)."""
    if start_method != "spawn":
        import warnings

        warnings.warn(f"This method only supports start_method=spawn (got: {start_method}).\n"
                      "To use a different start_method use:\n\t\t torch.multiprocessing.start_processes(...)",
                      FutureWarning, stacklevel=2)
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")
